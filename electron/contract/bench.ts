/**
 * Benchmarks as they cross the contract and land on disk: the report (report.json, written incrementally as JSONL),
 * its derived tables, the files a benchmark folder holds, and the requests, summaries and progress the UI sees.
 * JSON-serialisable throughout.
 */
import type {CpuContention} from "./cpuContention.js";
import type {MemoryReport} from "./memory.js";
import type {ContextKnobs, FixedBudget} from "./settings.js";
import type {DevicePlanKind, StrategyName} from "./strategies.js";

/** The files of one benchmark folder, by format: rewritten after every run (atomically), so a stop loses nothing. */
export const REPORT_FILES = {jsonl: "results.jsonl", json: "report.json", csv: "report.csv", html: "report.html"} as const;

/** Formats a report can be exported in. */
export const BENCH_EXPORT_FORMATS = ["html", "csv", "json"] as const;

export type BenchExportFormat = (typeof BENCH_EXPORT_FORMATS)[number];

export function isBenchExportFormat(value: unknown): value is BenchExportFormat {
    return typeof value === "string" && (BENCH_EXPORT_FORMATS as readonly string[]).includes(value);
}

/** One benchmarked placement: a planner strategy, optionally tuned by hand (pinned memory + best micro-batch). */
export type BenchVariant = {
    /** `"layers"`, `"fit"`, `"optimal"`, … or `"layers-tuned"` / `"fit-tuned"`. */
    readonly label: string;
    readonly strategy: StrategyName;
    /** Pinned host memory (mmap off) and, per measurement, the best of several micro-batches. */
    readonly handTuned: boolean;
    /**
     * A plan over every device of the process (CPU, GPUs, rpc-servers), of this kind; `strategy` is then only the
     * nearest one-GPU strategy. Absent: a one-GPU plan of `strategy`.
     */
    readonly devicePlan?: DevicePlanKind;
    /**
     * A user's llama.cpp command line, loaded exactly as llama.cpp would build it (llamaArgs/commandPlan.ts); `strategy`
     * is then only the baseline the command was priced beside. Absent: a plan of `strategy`.
     */
    readonly llamaCommand?: string;
};

/** What was measured in one point: time to first token at a prompt length, or time per output token at a reply length. */
export type PointKind = "ttft" | "tpot";

/** One measured point of a run (median and spread over the repeats) with the planner's prediction for it. */
export type BenchPoint = {
    readonly kind: PointKind;
    /** Prompt tokens (ttft) or generated tokens (tpot). */
    readonly tokens: number;
    readonly samplesMs: readonly number[];
    readonly medianMs: number;
    readonly minMs: number;
    readonly maxMs: number;
    /** (max − min) / median, in percent. */
    readonly spreadPct: number;
    /** Prompt tokens per second (ttft: tokens / TTFT) or generated tokens per second (tpot: 1000 / TPOT). */
    readonly tokensPerSec: number;
    /** The cost model's prediction for this point, ms (`null`: no prediction). */
    readonly predictedMs: number | null;
    /**
     * Where the measurement was expected, from this machine's prediction errors measured before the run
     * (engine/planner/predictionErrors.ts); absent in older reports and points without a prediction.
     */
    readonly predictedRangeMs?: {readonly lowMs: number; readonly highMs: number};
    /** Micro-batch this point was measured with (hand-tuned runs keep the best one per point). */
    readonly batchSize: number;
    /**
     * Stock llama-bench's tokens/s on the same cell with the same flags (pp for ttft, tg for tpot), when the benchmark
     * ran with `--llama-bench`; `null` when it ran but failed or lacked the cell.
     */
    readonly stockTokensPerSec?: number | null;
};

/** The plan a run loaded. */
export type BenchPlan = {
    readonly gpuLayers: number | "max";
    readonly overrides: readonly {readonly pattern: string; readonly bufferType: string}[];
    readonly batchSize: number;
    readonly contextSize: number;
    readonly threads: number;
    readonly useMmap: boolean;
    /** GPU use, op and KV offload, flash attention and KV cache type, as planned (loaded and reproduced with them). */
    readonly knobs: ContextKnobs;
    /** Bytes of weights in host memory / on the GPU, as planned. */
    readonly hostWeightBytes: number;
    readonly gpuWeightBytes: number;
    readonly predictedVramBytes: number;
    readonly notes: readonly string[];
    /**
     * GPU compute-buffer bytes per scratch key that llama.cpp's no-alloc simulation measured on this machine while
     * planning (CostInputs.scratchByKey, electron/engine/planner/costModel.ts), so a recorded machine's plan can be
     * replayed without its GPU. Absent without a GPU.
     */
    readonly scratchByKey?: Readonly<Record<string, number>>;
};

/** How to reproduce a run with stock llama.cpp tools. */
export type BenchReproduction = {
    /** `llama-cli …` with the same placement and settings. */
    readonly cli: string;
    /** `llama-bench …` on the same cells (prompts, generations, repeats). */
    readonly bench: string;
    /** `llama-bench` arguments after the program name (for spawning it). */
    readonly benchArgv: readonly string[];
};

/** One load of a variant (hand-tuned variants load once per micro-batch candidate). */
export type BenchLoad = {
    readonly plan: BenchPlan;
    readonly memory: MemoryReport | null;
    readonly loadMs: number;
    readonly reproduce: BenchReproduction;
    /** Stock llama-bench on this load's cells (only with `--llama-bench`). */
    readonly llamaBench?: BenchLlamaBench;
};

/** One cell as stock llama-bench measured it. */
export type LlamaBenchCell = {
    readonly kind: PointKind;
    /** Prompt tokens (pp, compared with TTFT) or generated tokens (tg, compared with TPOT). */
    readonly tokens: number;
    /**
     * Tokens/s of the median repetition — the statistic tensorwise's own points use (their median sample), so the
     * ratio compares like with like. llama-bench's own figure, the mean of per-repetition rates, is `meanTokensPerSec`.
     */
    readonly tokensPerSec: number;
    /** llama-bench's `avg_ts`: the mean over repetitions of tokens / time. */
    readonly meanTokensPerSec: number;
    readonly stdevTokensPerSec: number;
    /**
     * Each repetition, ms: the whole prompt (pp) or ms per generated token (tg) — the units of {@link BenchPoint}'s
     * `samplesMs`.
     */
    readonly samplesMs: readonly number[];
};

/** What stock llama-bench measured for one load, or why it could not. */
export type BenchLlamaBench = {
    readonly program: string;
    /** llama.cpp commit it was built from. */
    readonly commit: string;
    readonly cells: readonly LlamaBenchCell[];
    readonly error: string | null;
};

/** One budget × variant: its loads and measured points. */
export type BenchRun = {
    readonly id: string;
    /** As given: `"50%"`, `"4096"` (MiB). */
    readonly budget: string;
    readonly budgetBytes: number;
    readonly variant: BenchVariant;
    readonly status: "ok" | "failed" | "interrupted";
    readonly error: string | null;
    readonly loads: readonly BenchLoad[];
    readonly points: readonly BenchPoint[];
    /**
     * Decode floor: CPU-resident weight bytes over the measured CPU read bandwidth, ms per token (`null` when nothing
     * is on the CPU or no bandwidth was measured).
     */
    readonly tpotFloorMs: number | null;
    /**
     * Other programs' CPU use while this run's points were measured (the busiest of its loads); absent in older
     * reports and when no point was measured. A busy machine slows every point, so reports and replays say so.
     */
    readonly cpuContention?: CpuContention;
    readonly startedAt: string;
    readonly elapsedMs: number;
};

/** The machine and software a benchmark ran on. */
export type BenchEnvironment = {
    readonly hostname: string;
    readonly os: string;
    readonly cpu: {readonly model: string; readonly cores: number; readonly threads: number};
    readonly ramBytes: number;
    readonly backend: string;
    readonly gpu: {readonly name: string; readonly driver: string | null; readonly memoryTotal: string | null; readonly freeBytes: number | null} | null;
    readonly llamaCppRelease: string;
    readonly nodeLlamaCppVersion: string;
    readonly nodeVersion: string;
    readonly tensorwiseVersion: string;
    /** Measured CPU read bandwidth from the profile, bytes/s. */
    readonly cpuReadBytesPerSec: number | null;
};

/** The benchmarked model. */
export type BenchModel = {
    readonly path: string;
    readonly fileBytes: number;
    readonly weightBytes: number;
    readonly fileType: string | null;
    readonly layerCount: number | null;
    readonly quantMix: readonly {readonly type: string; readonly bytes: number; readonly tensors: number}[];
};

/** Every setting of a benchmark. */
export type BenchSettings = {
    readonly budgets: readonly string[];
    readonly prompts: readonly number[];
    readonly gens: readonly number[];
    readonly variants: readonly BenchVariant[];
    readonly repeats: number;
    readonly gpu: string;
    /** `--threads`, else the most a plan may use (each plan then takes the fastest measured count; see BenchPlan). */
    readonly threads: number;
    readonly contextSize: number;
    /** Base micro-batch of the planner (default runs). */
    readonly batchSize: number;
    /** Micro-batches a hand-tuned variant tries. */
    readonly tunedBatchSizes: readonly number[];
    /** Prompt tokens before the timed decode of a TPOT point. */
    readonly tpotPromptTokens: number;
    readonly warmupTokens: number;
    /** Stock llama-bench ran after every load with the same flags. Defaults to `false`. */
    readonly llamaBench?: boolean;
};

/** A whole benchmark (report.json). */
export type BenchReport = {
    readonly version: 1;
    readonly startedAt: string;
    readonly finishedAt: string | null;
    /** Runs planned in total; `runs.length` below it means the run stopped early. */
    readonly plannedRuns: number;
    readonly interrupted: boolean;
    readonly environment: BenchEnvironment;
    readonly model: BenchModel;
    readonly settings: BenchSettings;
    readonly runs: readonly BenchRun[];
};

/** A baseline the speed-up table compares against. `best-tuned` = per point the faster of layers-tuned / fit-tuned. */
export type BaselineName = "layers" | "fit" | "best-tuned" | "cpu-moe" | "n-cpu-moe";

/** One cell of the speed-up table: baseline time / variant time (> 1: the variant is faster). */
export type SpeedupCell = {
    readonly budget: string;
    readonly variant: string;
    readonly baseline: BaselineName;
    readonly kind: PointKind;
    readonly tokens: number;
    readonly speedup: number;
    readonly variantMs: number;
    readonly baselineMs: number;
};

/** Median absolute percentage error of the predictions of one variant. */
export type ErrorStat = {
    readonly variant: string;
    readonly ttft: number | null;
    readonly tpot: number | null;
    readonly all: number | null;
    /** Points with a prediction. */
    readonly points: number;
};

/** Strategies a benchmark compares (`handTuned` adds `layers-tuned` / `fit-tuned` twins). */
export type BenchStrategy = StrategyName;

export type BenchStartRequest = {
    /** Chosen by the client; progress events carry it. */
    benchId: string;
    /** Defaults to the loaded model. */
    path?: string;
    /** `auto` budgets are not benchmarked: a run compares fixed budgets. */
    budgets: FixedBudget[];
    promptLengths: number[];
    /** Each ≥ 2 (TPOT needs two tokens). */
    genLengths: number[];
    strategies: BenchStrategy[];
    repeats: number;
    /** Adds `layers-tuned` / `fit-tuned` (pinned memory, best micro-batch) for the chosen layers / fit. Defaults to `false`. */
    handTuned?: boolean;
};

/** A benchmark on disk (`<dataDir>/bench/<id>/`), for the list of past runs. */
export type BenchSummary = {
    id: string;
    modelName: string;
    modelPath: string;
    startedAt: string;
    finishedAt: string | null;
    /** `incomplete`: it stopped without finishing its report (the app or engine ended mid-run). */
    status: "running" | "done" | "interrupted" | "incomplete";
    plannedRuns: number;
    finishedRuns: number;
    failedRuns: number;
    budgets: string[];
    strategies: string[];
    backend: string;
};

/** A benchmark's report with the tables derived from it. */
export type BenchDetail = {summary: BenchSummary; report: BenchReport; speedups: SpeedupCell[]; errors: ErrorStat[]};

/** The latest timed request of a running benchmark. */
export type BenchSample = {kind: PointKind; tokens: number; ms: number};

/**
 * Progress of a running benchmark: `done` of `total` timed requests; `cell` is the budget × strategy being measured,
 * `step` what it does now (planning, loading, which point), `lastSample` the latest timed request, and `lastResult` a
 * budget × strategy run that just finished (its points are in the report from then on).
 */
export type BenchProgress = {
    benchId: string; done: number; total: number; cell: string; step: string;
    lastSample?: BenchSample;
    lastResult?: BenchRun;
};
