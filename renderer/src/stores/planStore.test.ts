import {beforeEach, describe, expect, it} from "vitest";
import type {LoadedModelState, PlannedLoad} from "../../../electron/contract/ipc";
import {usePlanStore} from "./planStore";

const loaded = {card: {fileName: "old.gguf"}} as unknown as LoadedModelState;
const planned = {placement: {strategy: "optimal"}, prediction: {memory: {bufferTypes: []}}} as unknown as PlannedLoad;

describe("planStore", () => {
    beforeEach(() => {
        usePlanStore.setState({run: {status: "running", taskId: "t", steps: []}, loaded});
    });

    it("keeps the model loaded before while a job profiles and plans (a cancel then loses nothing)", () => {
        usePlanStore.getState().progress({taskId: "t", step: "profile", progress: 0.4, detail: "timing 12 operators"});
        usePlanStore.getState().progress({taskId: "t", step: "profile", progress: 0.6, detail: "timing 12 operators"});
        const {run} = usePlanStore.getState();
        expect(run.status === "running" && run.steps).toEqual([{taskId: "t", step: "profile", progress: 0.6, detail: "timing 12 operators"}]);
        expect(usePlanStore.getState().loaded).toBe(loaded);
    });

    it("shows the plan sent before loading, and drops the old model the engine is about to unload", () => {
        usePlanStore.getState().progress({taskId: "t", step: "plan", progress: 1, detail: "planned", plan: planned});
        const {run} = usePlanStore.getState();
        expect(run.status === "running" && run.planned).toBe(planned);
        // the step list holds steps, not the plan
        expect(run.status === "running" && run.steps[0]).not.toHaveProperty("plan");
        expect(usePlanStore.getState().loaded).toBeNull();
    });

    it("ignores progress of another task", () => {
        usePlanStore.getState().progress({taskId: "other", step: "plan", progress: 1, plan: planned});
        const {run} = usePlanStore.getState();
        expect(run.status === "running" && run.steps).toEqual([]);
        expect(usePlanStore.getState().loaded).toBe(loaded);
    });
});
