/**
 * The planner-regret verdict per cell, from the measurements bench/drivers/bench-regret.mjs made: the fastest configuration
 * of the brute force (confirmed in interleaved rounds), tensorwise's plan run by stock llama-bench with the plan's
 * flags, and tensorwise's own runtime on the same plan — plus, where the plan misses by more than the tolerance, which
 * of its flags differ from the best and what the grid measured for the plan with that one flag changed.
 */
import {median} from "../stats.js";
import {ALL_GPU_LAYERS, cellLabel, configFlags, configKey, normaliseConfig, type RegretCell, type RegretConfig} from "./regretConfig.js";

/** The plan may be this much slower than the best before a cell is a miss (5%). */
export const REGRET_TOLERANCE = 1.05;

/** A configuration's measurements in one cell. */
export type MeasuredConfig = {
    readonly config: RegretConfig;
    /** Median ms (whole prompt for ttft, per token for tpot) in the brute-force pass; null when pruned, failed or over budget. */
    readonly bruteForceMs: number | null;
    /** The per-round medians of the confirmation rounds (empty: not a finalist). */
    readonly roundsMs: readonly number[];
    /** Within the budget by the memory check (a plan over budget is still measured, but cannot be the best). Defaults to `true`. */
    readonly eligible?: boolean;
};

/** One cell's verdict. */
export type CellVerdict = {
    readonly cell: RegretCell;
    readonly best: {readonly flags: string; readonly ms: number} | null;
    readonly plan: {readonly flags: string; readonly ms: number | null; readonly sameAsBest: boolean} | null;
    /** Plan via llama-bench ÷ best (1 = as fast as the best). */
    readonly regret: number | null;
    /** tensorwise's runtime on the plan, ms in the cell's unit, and ÷ best. */
    readonly runtime: {readonly ms: number; readonly ratio: number | null} | null;
    /** Slower than the best by more than {@link REGRET_TOLERANCE} in a way the flags can explain (see {@link inertFields}). */
    readonly miss: boolean;
    /** The plan differs from the best only in flags that cannot change this cell's work: any gap is measurement noise. */
    readonly equivalent: boolean;
    readonly note: string;
};

/** The time a configuration is judged by: the median of its round medians when it has rounds, else its brute-force median. */
export function judgedMs(measured: Pick<MeasuredConfig, "bruteForceMs" | "roundsMs">): number | null {
    return measured.roundsMs.length > 0 ? median(measured.roundsMs) : measured.bruteForceMs;
}

/** The fastest configurations of the brute force, best first (pruned, failed and over-budget ones have no time). */
export function rankByBruteForce(measured: readonly MeasuredConfig[], count: number): MeasuredConfig[] {
    return measured.filter((m) => m.bruteForceMs != null && m.eligible !== false).sort((a, b) => a.bruteForceMs! - b.bruteForceMs!).slice(0, count);
}

type Field = keyof RegretConfig;

/**
 * Flags that cannot change the work of `cell` under `config`: the micro-batch and op offload for decode (one token a
 * step), op offload below its threshold. source: ggml-backend.cpp op_offload_min_batch_size.
 */
export function inertFields(cell: RegretCell, config: RegretConfig, offloadMinBatch = 32): Set<Field> {
    const inert = new Set<Field>();
    if (cell.kind === "tpot") inert.add("ubatch").add("opOffload");
    else if (config.ubatch < offloadMinBatch) inert.add("opOffload");
    return inert;
}
const FIELD_WORDS: Readonly<Record<Field, string>> = {
    hideGpu: "GPU hidden (-dev none)", gpuLayers: "-ngl", overrides: "-ot", cpuMoeLayers: "-ncmoe", ubatch: "-ub", opOffload: "op offload",
    typeK: "-ctk", typeV: "-ctv", flashAttention: "-fa", kvOffload: "KV offload", threads: "-t", mmap: "mmap"
};

function show(field: Field, value: RegretConfig[Field]): string {
    if (field === "gpuLayers") return value === ALL_GPU_LAYERS ? "all" : String(value);
    if (field === "overrides") return (value as RegretConfig["overrides"]).map(([p, b]) => `${p}=${b}`).join(";") || "none";
    if (typeof value === "boolean") return value ? "on" : "off";
    return String(value);
}

/**
 * The flags where the plan differs from the best, each with the time the grid measured for the plan with just that
 * flag set as the best has it (null where that configuration was not measured).
 */
export function explainMiss(plan: RegretConfig, best: RegretConfig, timeOf: (config: RegretConfig) => number | null): {key: Field; field: string; plan: string; best: string; msWithBestValue: number | null}[] {
    const fields = (Object.keys(FIELD_WORDS) as Field[]).filter((f) => JSON.stringify(plan[f]) !== JSON.stringify(best[f]));
    return fields.map((f) => ({key: f, field: FIELD_WORDS[f], plan: show(f, plan[f]), best: show(f, best[f]), msWithBestValue: timeOf({...plan, [f]: best[f]})}));
}

const ms = (v: number): string => v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);

/** The verdict of one cell. `planConfig` null: the planner gave no plan (the note says why). */
export function cellVerdict(cell: RegretCell, options: {
    measured: readonly MeasuredConfig[];
    planConfig: RegretConfig | null;
    planProblem?: string | null;
    runtimeRoundsMs: readonly number[];
    runtimeProblem?: string | null;
    /** Defaults to 32. */
    offloadMinBatch?: number;
}): CellVerdict {
    const {measured, planConfig} = options;
    const timeOf = (config: RegretConfig): number | null => {
        // as the grid writes it (a hidden GPU drops the flags that then mean nothing)
        const key = configKey(normaliseConfig(config, Number.MAX_SAFE_INTEGER));
        const found = measured.find((m) => configKey(m.config) === key);
        return found == null ? null : judgedMs(found);
    };
    // the best is judged among the finalists when there were rounds (same-time measurements), else the brute force
    const eligible = measured.filter((m) => m.eligible !== false);
    const finalists = eligible.filter((m) => m.roundsMs.length > 0);
    const pool = finalists.length > 0 ? finalists : eligible.filter((m) => m.bruteForceMs != null);
    const ranked = pool.map((m) => ({m, t: judgedMs(m)!})).sort((a, b) => a.t - b.t);
    const bestEntry = ranked[0] ?? null;
    const best = bestEntry == null ? null : {flags: configFlags(bestEntry.m.config).join(" "), ms: bestEntry.t};
    const planMs = planConfig == null ? null : timeOf(planConfig);
    const plan = planConfig == null ? null : {flags: configFlags(planConfig).join(" "), ms: planMs,
        sameAsBest: bestEntry != null && configKey(bestEntry.m.config) === configKey(planConfig)};
    const regret = planMs != null && best != null ? planMs / best.ms : null;
    const runtimeMs = options.runtimeRoundsMs.length > 0 ? median(options.runtimeRoundsMs) : null;
    const runtime = runtimeMs == null ? null : {ms: runtimeMs, ratio: best == null ? null : runtimeMs / best.ms};
    const notes: string[] = [];
    if (options.planProblem != null) notes.push(options.planProblem);
    else if (planConfig != null && planMs == null) notes.push("the plan's configuration was not measured (over budget, pruned or failed: see the JSON)");
    const diffs = bestEntry != null && planConfig != null ? explainMiss(planConfig, bestEntry.m.config, timeOf) : [];
    const inert = planConfig == null ? new Set<Field>() : inertFields(cell, planConfig, options.offloadMinBatch);
    const equivalent = planConfig != null && bestEntry != null && diffs.every((d) => inert.has(d.key));
    const slower = regret != null && regret > REGRET_TOLERANCE;
    const miss = slower && !equivalent;
    const listDiffs = (): string => diffs.map((d) => `${d.field} ${d.plan} → ${d.best}${inert.has(d.key) ? " (no effect on this cell)" : ""}` +
        `${d.msWithBestValue == null ? "" : ` (plan with only that changed: ${ms(d.msWithBestValue)} ms)`}`).join(", ");
    if (miss) notes.push(`misses by ${((regret! - 1) * 100).toFixed(0)}%; differs from the best in ${listDiffs()}`);
    else if (slower && equivalent)
        notes.push(`${((regret! - 1) * 100).toFixed(0)}% slower, but the plan differs from the best only in flags that do not change this cell's work (${listDiffs()}): measurement noise, not a planner miss`);
    if (options.runtimeProblem != null) notes.push(`runtime: ${options.runtimeProblem}`);
    else if (runtime?.ratio != null && runtime.ratio > REGRET_TOLERANCE && !miss) notes.push(`tensorwise's runtime is ${((runtime.ratio - 1) * 100).toFixed(0)}% slower than llama-bench's best on this cell`);
    return {cell, best, plan, regret, runtime, miss: miss || planConfig == null || planMs == null, equivalent, note: notes.join("; ")};
}

/** A markdown table of verdicts: one row per cell. */
export function verdictTable(verdicts: readonly CellVerdict[]): string {
    const unit = (cell: RegretCell): string => cell.kind === "ttft" ? "ms" : "ms/token";
    const rows = verdicts.map((v) => {
        const u = unit(v.cell);
        return `| ${cellLabel(v.cell)} | \`${v.best?.flags ?? "–"}\` | ${v.best == null ? "–" : `${ms(v.best.ms)} ${u}`} | ` +
            `${v.plan == null ? "–" : v.plan.sameAsBest ? "(same as best)" : `\`${v.plan.flags}\``} | ${v.plan?.ms == null ? "–" : `${ms(v.plan.ms)} ${u}`} | ` +
            `${v.regret == null ? "–" : `${v.regret.toFixed(2)}×`} | ${v.runtime == null ? "–" : `${ms(v.runtime.ms)} ${u}`} | ` +
            `${v.runtime?.ratio == null ? "–" : `${v.runtime.ratio.toFixed(2)}×`} | ${v.miss ? "**miss** " : v.regret != null && v.regret <= REGRET_TOLERANCE ? "within 5% " : ""}${v.note} |`;
    });
    return ["| cell | fastest configuration (llama-bench flags) | its time | tensorwise's plan (as llama-bench flags) | plan via llama-bench | regret | tensorwise runtime | runtime ÷ best | note |",
        "|---|---|---|---|---|---|---|---|---|", ...rows].join("\n");
}
