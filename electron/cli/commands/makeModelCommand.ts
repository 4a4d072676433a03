import path from "node:path";
import {formatBytes} from "../../engine/format/formatBytes.js";
import {makeSyntheticModel, syntheticModelPresets, type SyntheticModelOptions, type SyntheticModelPresetName} from "../../engine/writer/makeSyntheticModel.js";
import type {SyntheticWeightType} from "../../engine/writer/makeSyntheticModel.js";
import {flagNumber} from "../flags.js";
import {UsageError} from "../UsageError.js";
import type {CliIo} from "../CliIo.js";

const weightTypes: readonly string[] = ["f32", "f16", "bf16", "q8_0", "q4_0"];

/** `tensorwise make-model <out.gguf> [--preset --layers --embd --ff --heads --kv-heads --vocab --type --seed] [--json]` */
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
        seed: flagNumber(values.seed, "seed", "seed")
    }).filter(([, value]) => value !== undefined));
    const options: SyntheticModelOptions = {
        ...shape,
        preset: preset as SyntheticModelPresetName,
        type: type as SyntheticWeightType,
        onProgress: values.json === true ? undefined : progressPrinter(io)
    };
    const started = performance.now();
    const result = await makeSyntheticModel(path.resolve(outPath), options);
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
