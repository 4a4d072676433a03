import path from "node:path";
import {formatBytes, formatTable} from "../../engine/format/formatBytes.js";
import {inspectModelFile} from "../../engineProcess/modelCard.js";
import type {CliIo} from "../CliIo.js";

/** `tensorwise inspect <gguf> [--tensors] [--json]`: validate (out of process, bounded) and describe a model. */
export async function inspectCommand(io: CliIo, modelPath: string, options: {json: boolean; tensors: boolean}): Promise<number> {
    const model = await inspectModelFile(path.resolve(modelPath));
    if (options.json) {
        io.out(JSON.stringify(model, null, 2));
        return 0;
    }
    io.out(`${path.basename(modelPath)}: ${model.architecture ?? "unknown architecture"}${model.name != null ? ` "${model.name}"` : ""}`);
    io.out(`  file ${formatBytes(model.fileSize)}, GGUF v${model.ggufVersion}, ${(model.parameterCount / 1e9).toFixed(3)} B parameters` +
        (model.fileType?.name != null ? `, ${model.fileType.name}` : ""));
    io.out(`  layers ${model.layerCount ?? "—"}, embedding ${model.embeddingLength ?? "—"}, feed-forward ${String(model.feedForwardLength ?? "—")}, ` +
        `heads ${String(model.headCount ?? "—")}/${String(model.headCountKv ?? "—")}, vocabulary ${model.vocabSize ?? "—"}, context ${model.contextLength ?? "—"}`);
    io.out("");
    io.out(formatTable([
        ["type", "tensors", "bytes", "share"],
        ...model.quantMix.map((entry) => [
            entry.type, String(entry.tensorCount), formatBytes(entry.bytes), `${(100 * entry.bytes / Math.max(1, model.tensorBytes)).toFixed(1)}%`
        ])
    ]));
    const shown = options.tensors ? model.tensors : model.tensors.slice(0, 12);
    io.out("");
    io.out(formatTable([
        ["tensor", "layer", "role", "type", "shape", "bytes"],
        ...shown.map((tensor) => [
            tensor.name, tensor.layer == null ? "—" : String(tensor.layer), tensor.role, tensor.type, tensor.shape.join("×"), formatBytes(tensor.bytes)
        ])
    ]));
    if (shown.length < model.tensors.length)
        io.out(`… ${model.tensors.length - shown.length} more tensors (--tensors lists all)`);
    return 0;
}
