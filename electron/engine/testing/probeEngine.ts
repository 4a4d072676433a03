import {getEngineLlama, type EngineGpu, type EngineLlama, type EngineLlamaOptions} from "../native/getEngineLlama.js";
import {UnpatchedBinaryError} from "../native/tensorwiseBindings.js";
import {devicesRequired, RequiredResourceMissingError} from "./requiredOrSkip.js";

export type EngineProbe = {engine: EngineLlama; reason: null} | {engine: null; reason: string};

/**
 * Loads (once per process: node-llama-cpp keeps one binding and its logger) the patched llama.cpp build for `gpu` and
 * checks it has a device of that kind. Tests that need a device skip with `reason` printed when it is missing (e.g. no
 * Vulkan driver, or GGML_VK_VISIBLE_DEVICES unset for llvmpipe) on a developer machine; where
 * {@link devicesRequired} (CI) a missing build or device throws instead, and so does an unpatched CPU build anywhere
 * (the install always builds that one: an unpatched binary there is a broken install, not a missing device).
 * `load` defaults to {@link getEngineLlama}.
 */
export async function probeEngine(gpu: EngineGpu, options: Omit<EngineLlamaOptions, "gpu"> = {},
    load: (options: EngineLlamaOptions) => Promise<EngineLlama> = getEngineLlama): Promise<EngineProbe> {
    const what = `the ${gpu} engine tests`;
    let engine: EngineLlama;
    try {
        engine = await load({maxThreads: 2, ...options, gpu});
    } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (devicesRequired() || (gpu === "cpu" && error instanceof UnpatchedBinaryError))
            throw new RequiredResourceMissingError(what, `no patched ${gpu} build can load here: ${message}`);
        return skip(what, `no patched ${gpu} build can load here: ${message}`);
    }
    if (gpu !== "cpu" && !engine.bindings.tensorwiseGetDevices().some((device) => device.type === "gpu" || device.type === "igpu")) {
        await engine.llama.dispose();
        const reason = `the ${gpu} build loaded but sees no GPU device (for Mesa's llvmpipe set GGML_VK_VISIBLE_DEVICES=0)`;
        if (devicesRequired()) throw new RequiredResourceMissingError(what, reason);
        return skip(what, reason);
    }
    return {engine, reason: null};
}

function skip(_what: string, reason: string): EngineProbe {
    // the test file prints the reason with its own name
    return {engine: null, reason: `${reason} (set TENSORWISE_REQUIRE_DEVICE=1 to make this a failure)`};
}
