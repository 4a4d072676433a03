import path from "node:path";
import type {ModelCard} from "../contract/ipc.js";
import type {InspectedModel} from "../engine/gguf/inspectGguf.js";
import {validateGgufOutOfProcess} from "../engine/gguf/validateGgufOutOfProcess.js";
import {inspectGguf} from "../engine/gguf/inspectGguf.js";
import type {Validated} from "../engine/gguf/ValidatedFileCache.js";

/** Validates a GGUF file out of process (bounded, hostile-safe), then inspects it. */
export async function inspectModelFile(modelPath: string): Promise<InspectedModel> {
    return (await inspectModelHeader(modelPath)).value;
}

/** {@link inspectModelFile}, with the length of the header the validator read (for ValidatedFileCache.ts). */
export async function inspectModelHeader(modelPath: string): Promise<Validated<InspectedModel>> {
    const validated = await validateGgufOutOfProcess(modelPath);
    return {value: inspectGguf(validated), headerBytes: Number(validated.dataOffset)};
}

/** The model card the UI shows. */
export function toModelCard(modelPath: string, model: InspectedModel): ModelCard {
    return {
        path: modelPath,
        fileName: path.basename(modelPath),
        fileBytes: model.fileSize,
        architecture: model.architecture ?? "unknown",
        name: model.name,
        parameterCount: model.parameterCount,
        layerCount: model.layerCount,
        contextLength: model.contextLength,
        embeddingLength: model.embeddingLength,
        vocabularySize: model.vocabSize,
        experts: moeExperts(model),
        quantMix: model.quantMix.map((entry) => ({type: entry.type, bytes: entry.bytes, tensors: entry.tensorCount})),
        tensors: model.tensors.map((tensor) => ({
            name: tensor.name, layer: tensor.layer, role: tensor.role, type: tensor.type, shape: tensor.shape, bytes: tensor.bytes
        }))
    };
}

/** `expert_count` / `expert_used_count` of a mixture-of-experts model, `null` for a dense one. */
export function moeExperts(model: Pick<InspectedModel, "expertCount" | "expertUsedCount">): {count: number; used: number} | null {
    const count = model.expertCount ?? 0;
    return count > 0 ? {count, used: model.expertUsedCount ?? 0} : null;
}

/** The model card's one-line MoE summary ("MoE: 128 experts, 8 active"), `null` for a dense model. */
export function moeSummary(experts: {count: number; used: number} | null | undefined): string | null {
    return experts == null ? null : `MoE: ${experts.count} experts, ${experts.used} active`;
}
