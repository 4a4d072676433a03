import type {Budget} from "../../contract/ipc.js";
import type {RuntimeSettings} from "../../contract/settings.js";
import {getEngineLlama, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import {renderLlamaCppFlags} from "../../engine/placement/llamaCppFlags.js";
import {autoPlan} from "../../engine/planner/autoPlan.js";
import type {StrategyName} from "../../contract/strategies.js";
import {progressLines, type CliIo} from "../CliIo.js";
import {loadedTensors} from "../../engine/gguf/loadedTensors.js";
import type {SpeculativeRequest} from "../../contract/speculative.js";
import {speculativeFlags, withSpeculativeOverrides} from "../../engine/speculative/speculativeFlags.js";

const MiB = 1024 * 1024;

/** `tensorwise plan <gguf> --budget <MiB|N%> --strategy <…> [--prompt-tokens N --gen-tokens N] [--json]`. */
export async function planCommand(io: CliIo, modelPath: string, options: {
    gpu: EngineGpu; budget: Budget; strategy: StrategyName; promptTokens: number; genTokens: number; contextSize: number; threads?: number; json: boolean;
    /** The llama.cpp knobs the user fixed (flagKnobs); the planner chooses the rest. */
    knobs?: Partial<RuntimeSettings>;
    profile?: {timeLimitMs: number};
    /** Speculative decoding to plan with the placement (`--spec`, `--model-draft`, `--spec-draft-n-max`). */
    speculative?: SpeculativeRequest;
}): Promise<number> {
    const engine = await getEngineLlama({gpu: options.gpu, maxThreads: options.threads});
    try {
        const {result, model, explanation, speculative} = await autoPlan(engine, modelPath, {
            budget: options.budget, strategy: options.strategy, workload: {promptTokens: options.promptTokens, genTokens: options.genTokens},
            settings: {contextSize: options.contextSize, ...options.knobs}, profile: options.profile, onProgress: options.json ? undefined : progressLines(io),
            ...(options.speculative != null ? {speculative: options.speculative} : {})
        });
        const bytes: Record<string, number> = {};
        const perLayer = new Map<string, Record<string, number>>();
        // the weights llama.cpp loads: MTP layers skipped; a tied output's copy adds bytes only on the GPU
        for (const t of loadedTensors(model)) {
            const where = result.resolved.onGpu.has(t.name) ? result.placement.defaultBufferType : "CPU";
            bytes[where] = (bytes[where] ?? 0) + (t.tiedTo != null && where === "CPU" ? 0 : t.bytes);
            const row = t.layer == null ? "global" : `blk.${t.layer}`;
            const cells = perLayer.get(row) ?? {};
            cells[t.role] = where === "CPU" ? 0 : 1;
            perLayer.set(row, cells);
        }
        const flags = renderLlamaCppFlags(withSpeculativeOverrides(result, speculative?.load), {modelPath, layerCount: model.layerCount ?? undefined, tensorNames: model.tensors.map((t) => t.name)});
        if (options.json) {
            io.out(JSON.stringify({strategy: result.strategy, fits: result.fits, reason: result.reason, gpuLayers: result.gpuLayers,
                settings: result.settings, prediction: result.prediction, bytesPerBufferType: bytes, overrides: result.overrides,
                placement: result.placement, llamaCppFlags: flags, notes: result.notes, explanation,
                speculative: speculative == null ? null : {load: speculative.load, chosen: speculative.chosen, best: speculative.best,
                    acceptance: speculative.acceptance, sentence: speculative.sentence}}, null, 2));
            return 0;
        }
        io.out(`strategy ${result.strategy}: -ngl ${result.gpuLayers}, micro-batch ${result.settings.batchSize}, ${result.settings.useMmap ? "mmap" : "pinned host memory"}`);
        io.out(`bytes per buffer type: ${Object.entries(bytes).map(([b, n]) => `${b} ${(n / MiB).toFixed(1)} MiB`).join(", ")}`);
        for (const [row, cells] of perLayer)
            io.out(`  ${row.padEnd(7)} ${Object.entries(cells).map(([role, gpu]) => `${role}:${gpu === 1 ? "G" : "c"}`).join(" ")}`);
        io.out(`overrides (${result.overrides.length}):`);
        for (const o of result.overrides) io.out(`  ${o.pattern} → ${o.bufferType}`);
        io.out(`llama.cpp: ${flags.command}`);
        for (const note of flags.notes)
            io.out(`  note: ${note}`);
        const p = result.prediction;
        io.out(`predicted: TTFT ${p.ttftMs.toFixed(1)} ms (prompt ${p.promptTokens}), TPOT ${p.tpotMs.toFixed(2)} ms, ` +
            `VRAM ${(p.vram.total / MiB).toFixed(1)} MiB = weights ${(p.vram.weights / MiB).toFixed(1)} + KV ${(p.vram.kv / MiB).toFixed(1)} + scratch ${(p.vram.scratch / MiB).toFixed(1)} ` +
            `(budget ${(result.budgetBytes / MiB).toFixed(1)} MiB)`);
        const hostParts = `weights ${(p.hostWeightBytes / MiB).toFixed(1)} + KV ${(p.hostKvBytes / MiB).toFixed(1)}`;
        io.out(p.hostScratchBytes == null
            ? `predicted host RAM: ${hostParts} MiB (scratch not priced: a GPU runs part of the graph)`
            : `predicted host RAM: ${((p.hostWeightBytes + p.hostKvBytes + p.hostScratchBytes) / MiB).toFixed(1)} MiB = ${hostParts} + scratch ${(p.hostScratchBytes / MiB).toFixed(1)}`);
        // the same sentences the app shows beside the plan (explainPlan.ts)
        for (const sentence of [explanation.placement, explanation.budget, explanation.gpuLayers, explanation.settings, explanation.profile])
            io.out(`why: ${sentence}`);
        if (speculative != null) {
            io.out(`speculative: ${speculative.sentence}`);
            if (speculative.load != null) io.out(`  llama.cpp, besides the flags above: ${speculativeFlags(speculative.load)}`);
        }
        io.out(`notes: ${result.notes.join("; ")}`);
        return 0;
    } finally {
        await engine.llama.dispose();
    }
}
