import {beforeEach, describe, expect, it} from "vitest";
import type {LoadedModelState, PlannedLoad} from "../../../electron/contract/ipc";
import {DEFAULT_OFFLOAD_SETTINGS, speculativeRequest, usePlanStore} from "./planStore";

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

describe("the speculation an Auto-offload asks for", () => {
    it("is the planner's choice by default, a draft picked from the library goes with draft or auto, and draft without one asks nothing", () => {
        expect(DEFAULT_OFFLOAD_SETTINGS.speculative).toEqual({choice: "auto", draftPath: null});
        expect(speculativeRequest(DEFAULT_OFFLOAD_SETTINGS)).toEqual({choice: "auto"});
        expect(speculativeRequest({speculative: {choice: "auto", draftPath: "/d.gguf"}})).toEqual({choice: "auto", draftPath: "/d.gguf"});
        expect(speculativeRequest({speculative: {choice: "draft", draftPath: "/d.gguf"}})).toEqual({choice: "draft", draftPath: "/d.gguf"});
        expect(speculativeRequest({speculative: {choice: "draft", draftPath: null}})).toBeNull();
        // a draft picked earlier is not sent with a kind that does not use it (the host would refuse the pair)
        expect(speculativeRequest({speculative: {choice: "ngram", draftPath: "/d.gguf"}})).toEqual({choice: "ngram"});
        expect(speculativeRequest({speculative: {choice: "off", draftPath: "/d.gguf"}})).toEqual({choice: "off"});
    });
});
