/**
 * The tiny calibration model's load with CPU↔GPU switches in every decode step, for the profiler's switch timing
 * (profiler/calibrateDecodeOverhead.ts): every layer on the GPU with every matmul weight in host memory and the KV cache
 * there too, so that only the norms llama.cpp pins to each layer's device run on the GPU — and how many switches that
 * makes, by the cost model's own count.
 */
import {inspectGguf} from "../gguf/inspectGguf.js";
import {validateGgufFile} from "../gguf/validateGguf.js";
import type {SwitchProbe} from "../profiler/calibrateDecodeOverhead.js";
import {decodeSwitches} from "./costModel.js";
import {perTensor, placementOverrides} from "./resolvePlacement.js";
import {plannerModelFrom} from "./types.js";

export const switchProbe: SwitchProbe = async (modelPath, gpuDevice) => {
    const model = plannerModelFrom(inspectGguf(await validateGgufFile(modelPath)));
    const islands = perTensor(model, new Set(model.tensors.filter((t) => t.op != null).map((t) => t.name)));
    // the load's own settings (calibrateDecodeOverhead.ts tinyTpotUs): what the count depends on is KV offload off
    const switches = decodeSwitches(model, islands, {useGpu: true, opOffload: true, kvOffload: false, flashAttention: false, kvCacheType: "f16",
        useMmap: false, batchSize: 64, contextSize: 256, threads: 1});
    return {overrides: placementOverrides(model, islands, gpuDevice), switches};
};
