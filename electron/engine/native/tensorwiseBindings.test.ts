import {spawnSync} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";
import type {Llama} from "node-llama-cpp";
import {describe, expect, it} from "vitest";
import {getTensorwiseBindings, TENSORWISE_EXT_VERSION, UnpatchedBinaryError} from "./tensorwiseBindings.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

function llamaWith(bindings: object): Llama {
    return {_bindings: bindings, buildType: "prebuilt", gpu: "vulkan"} as unknown as Llama;
}

describe("the patched-binary guard", () => {
    it("refuses a binary without the tensorwise extension instead of silently ignoring placements", () => {
        expect(() => getTensorwiseBindings(llamaWith({}))).toThrow(UnpatchedBinaryError);
        expect(() => getTensorwiseBindings(llamaWith({}))).toThrow(/npm run native/);
        expect(() => getTensorwiseBindings(llamaWith({tensorwiseExtVersion: () => TENSORWISE_EXT_VERSION + 1})))
            .toThrow(new RegExp(`version ${TENSORWISE_EXT_VERSION + 1}, this engine needs ${TENSORWISE_EXT_VERSION}`));
    });

    it("re-running the native install is a no-op that re-verifies every installed variant", () => {
        const result = spawnSync(process.execPath, [path.join(root, "native", "install.mjs")], {
            encoding: "utf8", env: {...process.env, TENSORWISE_NATIVE_VARIANTS: "cpu,vulkan"}
        });
        const output = result.stdout + result.stderr;
        expect(result.status, output).toBe(0);
        expect(output).toMatch(/node-llama-cpp JS: (\S+\.patch already applied(, )?)+\n/);
        expect(output).toMatch(/cpu: up to date/);
    });
});
