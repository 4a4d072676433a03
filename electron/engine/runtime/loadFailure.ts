/**
 * What a failed model load means for the user. node-llama-cpp reports llama.cpp's failures in two generic sentences
 * ("Failed to load model" from `LlamaModel`, "Failed to create context" from `LlamaContext`); the file was validated
 * before (electron/engine/gguf/validateGguf.ts), so what is left is mostly memory: a context is the KV cache plus the
 * compute buffers, and its creation fails when llama.cpp cannot allocate them (`llama_init_from_model`).
 */
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {isErrorCode} from "../../contract/errorCodes.js";

/** Messages of allocation failures from llama.cpp, ggml's backends (Vulkan's `ErrorOutOfDeviceMemory`, CUDA) and the OS. */
const OUT_OF_MEMORY = /out of (device |host )?memory|OutOfDeviceMemory|OutOfHostMemory|failed to allocate|cannot allocate memory|ENOMEM|std::bad_alloc/i;
const CONTEXT_FAILED = /^Failed to create context/;
const MODEL_FAILED = /^Failed to load model/;

/**
 * The error a failed load should cross the contract as: an error that already has a code keeps it; an allocation
 * failure (or a context that could not be created) becomes `not-enough-memory`, llama.cpp's generic refusal
 * `load-failed`; anything else is returned unchanged.
 */
export function loadFailure(error: unknown): unknown {
    if (error instanceof TensorwiseError || (error != null && typeof error === "object" && "code" in error && isErrorCode(error.code)))
        return error;
    const message = error instanceof Error ? error.message : String(error);
    if (OUT_OF_MEMORY.test(message) || CONTEXT_FAILED.test(message))
        return new TensorwiseError("not-enough-memory", `${message} (llama.cpp could not allocate the weights, KV cache or compute buffers)`);
    if (MODEL_FAILED.test(message))
        return new TensorwiseError("load-failed", message);
    return error;
}
