import {OFFLOAD_MIN_BATCH} from "./costModel.js";

/**
 * The op-offload threshold this process's GPU backends use: `GGML_OP_OFFLOAD_MIN_BATCH` read as ggml reads it
 * (`atoi(getenv(…))` once, when the CUDA/Vulkan/Metal registry creates its devices: ggml_backend_vk_reg_get_device,
 * ggml_backend_cuda_reg_get_device), else {@link OFFLOAD_MIN_BATCH}. The planner prices prefill with it, so a user who
 * tuned it gets predictions for the threshold llama.cpp really applies. Throws for values below 2: those offload every
 * decode step too, which the cost model does not price.
 */
export function offloadMinBatchFromEnv(env: NodeJS.ProcessEnv = process.env): number {
    const raw = env.GGML_OP_OFFLOAD_MIN_BATCH;
    if (raw == null) return OFFLOAD_MIN_BATCH;
    // atoi: optional whitespace and sign, leading digits, anything else → 0
    const match = /^\s*([+-]?\d+)/.exec(raw);
    const value = match == null ? 0 : Number.parseInt(match[1]!, 10);
    if (value < 2)
        throw new Error(`GGML_OP_OFFLOAD_MIN_BATCH=${JSON.stringify(raw.slice(0, 20))} makes llama.cpp offload single-token decode steps, which tensorwise cannot plan for: unset it or set it to 2 or more.`);
    return value;
}
