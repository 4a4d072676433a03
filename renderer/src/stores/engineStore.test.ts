import {describe, expect, it} from "vitest";
import {useEngineStore} from "./engineStore";

describe("engine store", () => {
    it("counts applied states, so an answer that raced a newer event can be recognised as stale", () => {
        const before = useEngineStore.getState().engineVersion;
        useEngineStore.getState().setEngine({state: "idle"});
        expect(useEngineStore.getState().engineVersion).toBe(before + 1);
        expect(useEngineStore.getState().engine).toEqual({state: "idle"});
    });
});
