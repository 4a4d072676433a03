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
import type {CommandComparison} from "../../engine/llamaArgs/commandPlan.js";
import {predictionDeviceKind, predictionModelKey, predictionRange, rangesSentence, readPredictionErrors} from "../../engine/planner/predictionErrors.js";
import {defaultProfileCacheDir} from "../../engine/profiler/profileMachine.js";
import {isContended} from "../../engine/profiler/cpuContention.js";
import type {LlamaCommand} from "../../engine/llamaArgs/parseLlamaCommand.js";

const MiB = 1024 * 1024;

/** The comparison as JSON: the priced plan's figures, not its per-tensor sets (the differences name the tensors). */
function commandJson(c: CommandComparison): unknown {
    const p = c.priced;
    return {
        program: c.command.program, refused: c.refused, notPriced: c.command.notPriced,
        priced: p == null ? null : {fits: p.fits, reason: p.reason, gpuLayers: p.gpuLayers, overrides: p.overrides, settings: p.settings,
            prediction: p.prediction, notes: p.notes},
        overshootBytes: c.overshootBytes, differences: c.differences.map(({tensors: _tensors, ...rest}) => rest), knobDifferences: c.knobDifferences
    };
}

/** The user's command beside the plan; exit 1 when it cannot be priced here. */
function printCommand(io: CliIo, c: CommandComparison, plan: {prediction: {ttftMs: number; tpotMs: number; requestMs: number; vram: {total: number}}}): number {
    io.out("");
    io.out(`your ${c.command.program} command, priced on this machine:`);
    for (const note of c.command.notPriced) io.out(`  not priced: ${note.flag} (${note.why})`);
    if (c.priced == null) {
        for (const note of c.refused) io.out(`  refused: ${note.flag}: ${note.why}`);
        return 1;
    }
    const p = c.priced.prediction;
    const q = plan.prediction;
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    io.out(`  -ngl ${c.priced.gpuLayers}, ${c.priced.overrides.length} overrides; ${c.priced.fits ? "fits" : `DOES NOT FIT: ${c.priced.reason}`}`);
    io.out(`  predicted: TTFT ${p.ttftMs.toFixed(1)} ms (plan ${q.ttftMs.toFixed(1)}, ${ratio(p.ttftMs, q.ttftMs)}), TPOT ${p.tpotMs.toFixed(2)} ms ` +
        `(plan ${q.tpotMs.toFixed(2)}, ${ratio(p.tpotMs, q.tpotMs)}), VRAM ${(p.vram.total / MiB).toFixed(1)} MiB (plan ${(q.vram.total / MiB).toFixed(1)})`);
    for (const note of c.priced.notes) io.out(`  note: ${note}`);
    if (c.differences.length === 0 && c.knobDifferences.length === 0) io.out("  the same placement and knobs as the plan");
    for (const d of c.differences)
        io.out(`  differs: ${d.what}, ${(d.bytes / MiB).toFixed(1)} MiB on the ${d.command} (the plan: ${d.plan}); ` +
            (Number.isFinite(d.requestMsDelta) ? `moving them alone ${d.requestMsDelta >= 0 ? "costs" : "saves"} ${Math.abs(d.requestMsDelta).toFixed(1)} ms a request` : "not priced alone"));
    for (const k of c.knobDifferences) io.out(`  differs: ${k}`);
    return 0;
}

/** `tensorwise plan <gguf> --budget <MiB|N%> --strategy <…> [--prompt-tokens N --gen-tokens N] [--json]`. */
export async function planCommand(io: CliIo, modelPath: string, options: {
    gpu: EngineGpu; budget: Budget; strategy: StrategyName; promptTokens: number; genTokens: number; contextSize: number; threads?: number; json: boolean;
    /** The llama.cpp knobs the user fixed (flagKnobs); the planner chooses the rest. */
    knobs?: Partial<RuntimeSettings>;
    profile?: {timeLimitMs: number};
    /** Speculative decoding to plan with the placement (`--spec`, `--model-draft`, `--spec-draft-n-max`). */
    speculative?: SpeculativeRequest;
    /** A llama.cpp command to price beside the plan (`--llama-args`). */
    llamaCommand?: LlamaCommand;
}): Promise<number> {
    const engine = await getEngineLlama({gpu: options.gpu, maxThreads: options.threads});
    try {
        const {result, model, explanation, speculative, command, cost, profile} = await autoPlan(engine, modelPath, {
            budget: options.budget, strategy: options.strategy, workload: {promptTokens: options.promptTokens, genTokens: options.genTokens},
            settings: {contextSize: options.contextSize, ...options.knobs}, profile: options.profile, onProgress: options.json ? undefined : progressLines(io),
            ...(options.speculative != null ? {speculative: options.speculative} : {}),
            ...(options.llamaCommand != null ? {llamaCommand: options.llamaCommand} : {})
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
        // the range each figure is expected in, from this machine's measured prediction errors (predictionErrors.ts)
        const errors = readPredictionErrors(defaultProfileCacheDir());
        const rangeOf = (figure: "ttft" | "tpot", predictedMs: number) => predictionRange(errors, {figure, predictedMs,
            deviceKind: predictionDeviceKind(cost.gpuDevice, result.settings.useGpu && result.resolved.onGpu.size > 0),
            modelKey: predictionModelKey(modelPath), contended: profile.cpuContention != null && isContended(profile.cpuContention)});
        const ttftRange = rangeOf("ttft", result.prediction.ttftMs);
        const tpotRange = rangeOf("tpot", result.prediction.tpotMs);
        if (options.json) {
            io.out(JSON.stringify({strategy: result.strategy, fits: result.fits, reason: result.reason, gpuLayers: result.gpuLayers,
                settings: result.settings, prediction: result.prediction, bytesPerBufferType: bytes, overrides: result.overrides,
                placement: result.placement, llamaCppFlags: flags, notes: result.notes, explanation,
                speculative: speculative == null ? null : {load: speculative.load, chosen: speculative.chosen, best: speculative.best,
                    acceptance: speculative.acceptance, sentence: speculative.sentence},
                llamaCommand: command == null ? null : commandJson(command), ranges: {ttft: ttftRange, tpot: tpotRange}}, null, 2));
            return command?.priced === null ? 1 : 0;
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
        io.out(`expected: TTFT ${ttftRange.lowMs.toFixed(1)}–${ttftRange.highMs.toFixed(1)} ms, TPOT ${tpotRange.lowMs.toFixed(2)}–${tpotRange.highMs.toFixed(2)} ms ` +
            `(${rangesSentence(ttftRange, tpotRange, profile.cpuContention != null && isContended(profile.cpuContention))})`);
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
        if (command != null) return printCommand(io, command, result);
        return 0;
    } finally {
        await engine.llama.dispose();
    }
}
