import {describe, expect, it} from "vitest";
import {useBenchStore} from "./benchStore";

describe("bench store", () => {
    it("does not follow a finished benchmark as running again when a late list answer says so", () => {
        const store = useBenchStore.getState();
        store.setRun({status: "running", benchId: "b1", progress: null, stopping: false});
        store.finish("b1", {status: "idle"});
        useBenchStore.getState().followRunning("b1");
        expect(useBenchStore.getState().run).toEqual({status: "idle"});
        useBenchStore.getState().followRunning("b2");
        expect(useBenchStore.getState().run).toMatchObject({status: "running", benchId: "b2"});
    });
});
