import path from "node:path";
import {formatBytes} from "../../engine/format/formatBytes.js";
import {makeSyntheticModel, syntheticModelPresets, type SyntheticModelOptions, type SyntheticModelPresetName} from "../../engine/writer/makeSyntheticModel.js";
import type {SyntheticWeightType} from "../../engine/writer/makeSyntheticModel.js";
import {flagNumber} from "../flags.js";
import {UsageError} from "../UsageError.js";
import type {CliIo} from "../CliIo.js";

const weightTypes: readonly string[] = ["f32", "f16", "bf16", "q8_0", "q4_0"];

/**
 * `tensorwise make-model <out.gguf> [--preset --arch --layers --embd --ff --heads --kv-heads --head-dim --vocab --experts
 * --experts-used --expert-ff --type --seed] [--json]`
 */
export async function makeModelCommand(io: CliIo, outPath: string, values: Record<string, string | boolean | undefined>): Promise<number> {
    const preset = String(values.preset ?? "tiny");
    if (!(preset in syntheticModelPresets))
        throw new UsageError(`--preset must be one of ${Object.keys(syntheticModelPresets).join(", ")} (got "${preset}")`);
    const type = String(values.type ?? "f16");
    if (!weightTypes.includes(type))
        throw new UsageError(`--type must be one of ${weightTypes.join(", ")} (got "${type}")`);
    const shape = Object.fromEntries(Object.entries({
        layers: flagNumber(values.layers, "layers", "modelLayers"),
        embd: flagNumber(values.embd, "embd", "modelEmbd"),
        ff: flagNumber(values.ff, "ff", "modelFf"),
        heads: flagNumber(values.heads, "heads", "modelHeads"),
        kvHeads: flagNumber(values["kv-heads"], "kv-heads", "modelHeads"),
        vocab: flagNumber(values.vocab, "vocab", "modelVocab"),
        headDim: flagNumber(values["head-dim"], "head-dim", "modelEmbd"),
        experts: flagNumber(values.experts, "experts", "modelExperts"),
        expertsUsed: flagNumber(values["experts-used"], "experts-used", "modelExperts"),
        expertFf: flagNumber(values["expert-ff"], "expert-ff", "modelFf"),
        seed: flagNumber(values.seed, "seed", "seed")
    }).filter(([, value]) => value !== undefined));
    const arch = values.arch == null ? undefined : String(values.arch);
    if (arch !== undefined && arch !== "llama" && arch !== "qwen3moe")
        throw new UsageError(`--arch must be llama or qwen3moe (got "${arch}")`);
    const options: SyntheticModelOptions = {
        ...shape,
        ...(arch !== undefined ? {arch} : {}),
        preset: preset as SyntheticModelPresetName,
        type: type as SyntheticWeightType,
        onProgress: values.json === true ? undefined : progressPrinter(io)
    };
    const started = performance.now();
    let result;
    try {
        result = await makeSyntheticModel(path.resolve(outPath), options);
    } catch (error) {
        // a shape llama.cpp could not load: say which, as a usage error
        if (error instanceof RangeError) throw new UsageError(error.message);
        throw error;
    }
    const seconds = (performance.now() - started) / 1000;
    if (values.json === true)
        io.out(JSON.stringify({...result, seconds}, null, 2));
    else
        io.out(`wrote ${outPath}: ${result.tensorCount} tensors, ${formatBytes(result.totalBytes)} in ${seconds.toFixed(1)} s`);
    return 0;
}

function progressPrinter(io: CliIo): (written: number, total: number) => void {
    let lastPercent = -1;
    return (written, total) => {
        const percent = Math.floor(100 * written / Math.max(1, total));
        if (percent >= lastPercent + 10 || percent === 100) {
            lastPercent = percent;
            io.err(`  ${percent}% (${formatBytes(written)} of ${formatBytes(total)})`);
        }
    };
}
