// Where a device is required (CI), a missing one fails the run instead of skipping it.
import {afterEach, describe, expect, it} from "vitest";
import {UnpatchedBinaryError} from "../native/tensorwiseBindings.js";
import {probeEngine} from "./probeEngine.js";
import {devicesRequired, requiredOrSkip, RequiredResourceMissingError} from "./requiredOrSkip.js";

const saved = {...process.env};
afterEach(() => {
    for (const key of ["CI", "TENSORWISE_REQUIRE_DEVICE", "TENSORWISE_REQUIRE_VULKAN"]) {
        if (saved[key] == null) delete process.env[key];
        else process.env[key] = saved[key];
    }
});

describe("device tests: skip on a developer machine, fail where required", () => {
    it("CI=true, TENSORWISE_REQUIRE_VULKAN=1 (.ci/run) or TENSORWISE_REQUIRE_DEVICE=1 require devices", () => {
        expect(devicesRequired({})).toBe(false);
        expect(devicesRequired({CI: "true"})).toBe(true);
        expect(devicesRequired({TENSORWISE_REQUIRE_VULKAN: "1"})).toBe(true);
        expect(devicesRequired({TENSORWISE_REQUIRE_DEVICE: "1"})).toBe(true);
        expect(requiredOrSkip("x", null, {CI: "true"})).toBeNull();
        expect(requiredOrSkip("the x tests", "no x here", {})).toBe("no x here");
        expect(() => requiredOrSkip("the x tests", "no x here", {CI: "true"})).toThrow(/the x tests cannot run here.*no x here/);
    });

    it("a build that cannot load is a skip with its reason, or an error when required", async () => {
        for (const key of ["CI", "TENSORWISE_REQUIRE_DEVICE", "TENSORWISE_REQUIRE_VULKAN"]) delete process.env[key];
        const noBuild = async (): Promise<never> => { throw new Error("no vulkan binary found"); };
        const skipped = await probeEngine("vulkan", {}, noBuild);
        expect(skipped.engine).toBeNull();
        expect(skipped.reason).toMatch(/no patched vulkan build can load here: no vulkan binary found/);
        process.env.TENSORWISE_REQUIRE_DEVICE = "1";
        await expect(probeEngine("vulkan", {}, noBuild)).rejects.toThrow(RequiredResourceMissingError);
    });

    it("an unpatched CPU build fails even on a developer machine; an unpatched GPU build fails where required", async () => {
        for (const key of ["CI", "TENSORWISE_REQUIRE_DEVICE", "TENSORWISE_REQUIRE_VULKAN"]) delete process.env[key];
        const unpatched = async (): Promise<never> => { throw new UnpatchedBinaryError("the loaded binary has no tensorwise extension"); };
        await expect(probeEngine("cpu", {}, unpatched)).rejects.toThrow(/no patched cpu build.*no tensorwise extension/);
        expect((await probeEngine("vulkan", {}, unpatched)).reason).toMatch(/no tensorwise extension/);
        process.env.TENSORWISE_REQUIRE_VULKAN = "1";
        await expect(probeEngine("vulkan", {}, unpatched)).rejects.toThrow(RequiredResourceMissingError);
    });
});
