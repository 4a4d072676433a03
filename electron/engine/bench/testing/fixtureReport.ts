/** A small, fixed benchmark report for the report builders' tests. */
import type {BenchLoad, BenchPoint, BenchReport, BenchRun, BenchVariant} from "../../../contract/bench.js";

const MiB = 1024 * 1024;

function point(kind: BenchPoint["kind"], tokens: number, medianMs: number, predictedMs: number | null, batchSize = 512): BenchPoint {
    return {kind, tokens, samplesMs: [medianMs * 0.9, medianMs, medianMs * 1.1], medianMs, minMs: medianMs * 0.9, maxMs: medianMs * 1.1,
        spreadPct: 20, tokensPerSec: kind === "ttft" ? tokens / (medianMs / 1000) : 1000 / medianMs, predictedMs, batchSize};
}

function load(gpuLayers: number | "max", overrides: number, batchSize = 512): BenchLoad {
    return {
        plan: {gpuLayers, overrides: Array.from({length: overrides}, (_, i) => ({pattern: `^blk\\.${i}\\.ffn_up\\.weight$`, bufferType: "CPU"})),
            batchSize, contextSize: 2304, threads: 16, useMmap: overrides === 0, hostWeightBytes: 100 * MiB, gpuWeightBytes: 100 * MiB,
            predictedVramBytes: 120 * MiB, notes: [], knobs: {useGpu: true, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16"}},
        memory: {bufferTypes: [{bufferType: "CUDA0", device: "CUDA0", isHost: false, weightsBytes: 100 * MiB, kvCacheBytes: 8 * MiB, scratchBytes: 12 * MiB}],
            host: {weightsBytes: 100 * MiB, kvCacheBytes: 0, scratchBytes: 1 * MiB}, device: {weightsBytes: 100 * MiB, kvCacheBytes: 8 * MiB, scratchBytes: 12 * MiB}},
        loadMs: 1500,
        reproduce: {cli: "llama-cli -m m.gguf -ngl 16", bench: "llama-bench -m m.gguf -ngl 16 -p 64,2048 -n 32 -r 3", benchArgv: ["-m", "m.gguf"]}
    };
}

const variant = (label: string, handTuned = false): BenchVariant =>
    ({label, strategy: label.replace("-tuned", "") as BenchVariant["strategy"], handTuned});

/** Times in ms: [ttft@64, ttft@2048, tpot@32] per variant, one budget. */
function run(budget: string, v: BenchVariant, ms: [number, number, number], predicted: [number, number, number] | null, status: BenchRun["status"] = "ok"): BenchRun {
    return {
        id: `${budget}/${v.label}`, budget, budgetBytes: 200 * MiB, variant: v, status, error: status === "ok" ? null : "out of memory, \"CUDA0\"",
        loads: status === "ok" ? [load(v.label === "layers" ? 16 : "max", v.label === "optimal" ? 3 : 0)] : [],
        points: status === "ok" ? [point("ttft", 64, ms[0], predicted?.[0] ?? null), point("ttft", 2048, ms[1], predicted?.[1] ?? null), point("tpot", 32, ms[2], predicted?.[2] ?? null)] : [],
        tpotFloorMs: 10, startedAt: "2026-11-22T10:00:00.000Z", elapsedMs: 30_000
    };
}

/** Budgets 50% and 75%; variants layers, fit, optimal, layers-tuned, fit-tuned; `fit` failed at 75%. */
export function fixtureReport(): BenchReport {
    const variants = [variant("layers"), variant("fit"), variant("optimal"), variant("layers-tuned", true), variant("fit-tuned", true)];
    return {
        version: 1, startedAt: "2026-11-22T10:00:00.000Z", finishedAt: "2026-11-22T10:10:00.000Z", plannedRuns: 10, interrupted: false,
        environment: {hostname: "gpu-1", os: "Linux 6.8 x64", cpu: {model: "Test CPU", cores: 16, threads: 16}, ramBytes: 128 * 2 ** 30, backend: "cuda",
            gpu: {name: "NVIDIA H100 80GB HBM3", driver: "580.65", memoryTotal: "81559 MiB", freeBytes: 80 * 2 ** 30},
            llamaCppRelease: "v0.5.0", nodeLlamaCppVersion: "3.22.1", nodeVersion: "v20.20.2", tensorwiseVersion: "0.1.0", cpuReadBytesPerSec: 100e9},
        model: {path: "/models/llama3-8b-q4_k_m.gguf", fileBytes: 400 * MiB, weightBytes: 400 * MiB, fileType: "Q4_K_M", layerCount: 32,
            quantMix: [{type: "q4_K", bytes: 300 * MiB, tensors: 200}, {type: "q6_K", bytes: 100 * MiB, tensors: 20}]},
        settings: {budgets: ["50%", "75%"], prompts: [64, 2048], gens: [32], variants, repeats: 3, gpu: "cuda", threads: 16, contextSize: 2304,
            batchSize: 512, tunedBatchSizes: [512, 2048], tpotPromptTokens: 1, warmupTokens: 8},
        runs: [
            run("50%", variants[0]!, [100, 2000, 40], [90, 2100, 42]),
            run("50%", variants[1]!, [200, 2500, 50], [200, 2500, 50]),
            run("50%", variants[2]!, [20, 1000, 32], [21, 950, 32]),
            run("50%", variants[3]!, [25, 1300, 36], null),
            run("50%", variants[4]!, [30, 1250, 38], null),
            run("75%", variants[0]!, [50, 1000, 20], [55, 1000, 20]),
            run("75%", variants[1]!, [0, 0, 0], null, "failed"),
            run("75%", variants[2]!, [10, 500, 16], [10, 500, 16])
        ]
    };
}
