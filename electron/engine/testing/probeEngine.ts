import {getEngineLlama, type EngineGpu, type EngineLlama, type EngineLlamaOptions} from "../native/getEngineLlama.js";

export type EngineProbe = {engine: EngineLlama; reason: null} | {engine: null; reason: string};

/**
 * Loads (once per process: node-llama-cpp keeps one binding and its logger) the patched llama.cpp build for `gpu` and checks it has a device of that kind. Tests that need a device
 * skip with `reason` printed when it is missing (e.g. no Vulkan driver, or GGML_VK_VISIBLE_DEVICES unset for llvmpipe).
 */
export async function probeEngine(gpu: EngineGpu, options: Omit<EngineLlamaOptions, "gpu"> = {}): Promise<EngineProbe> {
    let engine: EngineLlama;
    try {
        engine = await getEngineLlama({maxThreads: 2, ...options, gpu});
    } catch (error) {
        return {engine: null, reason: `no ${gpu} build can load here: ${error instanceof Error ? error.message : String(error)}`};
    }
    if (gpu !== "cpu" && !engine.bindings.tensorwiseGetDevices().some((device) => device.type === "gpu" || device.type === "igpu")) {
        await engine.llama.dispose();
        return {engine: null, reason: `the ${gpu} build loaded but sees no GPU device (for Mesa's llvmpipe set GGML_VK_VISIBLE_DEVICES=0)`};
    }
    return {engine, reason: null};
}
