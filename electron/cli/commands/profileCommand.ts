import {inspectGguf} from "../../engine/gguf/inspectGguf.js";
import {loadedTensors} from "../../engine/gguf/loadedTensors.js";
import {validateGgufOutOfProcess} from "../../engine/gguf/validateGgufOutOfProcess.js";
import {getEngineLlama, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import {distinctExpertOperators, distinctOperators} from "../../engine/profiler/operatorShapes.js";
import {defaultProfileCacheDir, profileMachine} from "../../engine/profiler/profileMachine.js";
import {switchProbe} from "../../engine/planner/switchProbe.js";
import {progressLines, type CliIo} from "../CliIo.js";

/** `tensorwise profile <gguf> [--gpu …] [--threads N] [--refresh] [--json]`: time the model's weight operators here. */
export async function profileCommand(io: CliIo, modelPath: string, options: {
    gpu: EngineGpu; threads?: number; refresh: boolean; json: boolean; profile?: {timeLimitMs: number};
}): Promise<number> {
    const model = inspectGguf(await validateGgufOutOfProcess(modelPath, {timeoutMs: 30_000}));
    const engine = await getEngineLlama({gpu: options.gpu, maxThreads: options.threads});
    try {
        const profile = await profileMachine(engine, distinctOperators(loadedTensors(model)), {
            ...options.profile, cacheDir: defaultProfileCacheDir(), refresh: options.refresh, expertOps: distinctExpertOperators(loadedTensors(model), model.expertUsedCount ?? 1),
            switchProbe,
            onProgress: options.json ? undefined : progressLines(io)
        });
        if (options.json) {
            io.out(JSON.stringify(profile, null, 2));
            return 0;
        }
        io.out(`profile ${profile.key}: ${profile.elapsedMs.toFixed(0)} ms, ${profile.threads} threads${profile.truncated ? " (truncated)" : ""}`);
        io.out(`CPU read bandwidth: ${(profile.cpuReadBytesPerSec / 1e9).toFixed(1)} GB/s`);
        for (const t of profile.transfers)
            io.out(`${t.device}: H2D pinned ${(t.pinnedH2dBytesPerSec / 1e9).toFixed(1)} GB/s, pageable ${(t.pageableH2dBytesPerSec / 1e9).toFixed(1)} GB/s, ` +
                `D2H ${(t.d2hBytesPerSec / 1e9).toFixed(1)} GB/s, switch ${t.switchUs.toFixed(1)} µs` +
                (profile.decodeSwitchUs != null ? `, ${profile.decodeSwitchUs.toFixed(1)} µs a switch inside a decode step (CPU side included)` : ""));
        for (const m of profile.matmuls)
            io.out(`${m.device.padEnd(8)} ${m.type.padEnd(6)} ${`${m.rows}×${m.cols}`.padEnd(12)} batch ${String(m.batch).padStart(5)}: ` +
                (m.supported ? `${(m.medianUs / 1000).toFixed(3)} ms (min ${(m.minUs / 1000).toFixed(3)}, n=${m.samples})` : "unsupported") +
                // a CPU weight llama.cpp repacks on this load (AMX, CPU_REPACK) was timed in that layout
                (m.weightBufferType != null && m.weightBufferType !== m.device ? ` [${m.weightBufferType}]` : ""));
        for (const m of profile.expertMatmuls ?? [])
            io.out(`${m.device.padEnd(8)} ${m.type.padEnd(6)} ${`${m.rows}×${m.cols}`.padEnd(12)} MUL_MAT_ID ${m.used}/${m.count} experts, batch ${String(m.batch).padStart(5)} ` +
                `(${m.distinct} distinct): ` + (m.supported ? `${(m.medianUs / 1000).toFixed(3)} ms (min ${(m.minUs / 1000).toFixed(3)}, n=${m.samples})` : "unsupported"));
        for (const c of profile.expertCopies ?? [])
            io.out(`${c.device.padEnd(8)} ${c.type.padEnd(6)} ${`${c.rows}×${c.cols}`.padEnd(12)} copy of ${c.distinct}/${c.count} used experts (batch ${c.batch}, ` +
                `${(c.bytes / 2 ** 20).toFixed(1)} MiB): ${(c.medianUs / 1000).toFixed(3)} ms`);
        return 0;
    } finally {
        await engine.llama.dispose();
    }
}
