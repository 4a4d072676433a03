import {describe, expect, it} from "vitest";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {loadFailure} from "./loadFailure.js";

describe("loadFailure", () => {
    it("an allocation failure or a context that could not be created is not-enough-memory, with llama.cpp's words kept", () => {
        for (const message of [
            "Failed to create context", "ggml_vulkan: Device memory allocation of size 4294967296 failed: ErrorOutOfDeviceMemory",
            "CUDA error: out of memory", "failed to allocate CPU buffer of size 123", "std::bad_alloc"
        ]) {
            const mapped = loadFailure(new Error(message));
            expect(mapped, message).toBeInstanceOf(TensorwiseError);
            expect((mapped as TensorwiseError).code, message).toBe("not-enough-memory");
            expect((mapped as TensorwiseError).message, message).toContain(message);
        }
    });

    it("llama.cpp's generic refusal is load-failed; coded and unrelated errors pass through unchanged", () => {
        expect((loadFailure(new Error("Failed to load model")) as TensorwiseError).code).toBe("load-failed");
        const coded = new TensorwiseError("context-too-large", "too big");
        expect(loadFailure(coded)).toBe(coded);
        const probe = Object.assign(new Error("tensor names a buffer type that does not exist"), {code: "bad-placement"});
        expect(loadFailure(probe)).toBe(probe);
        const other = new Error("something else");
        expect(loadFailure(other)).toBe(other);
    });
});
