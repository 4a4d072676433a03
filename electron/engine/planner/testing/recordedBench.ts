/**
 * A recorded benchmark replayed without its machine: a `tensorwise bench` report (report.json), the model's tensor
 * table (`tensorwise inspect --json`) and the machine profiles that benchmark planned with (its profile cache folder),
 * as bench/gpu/run-on-gpu.sh and bench/record-machine.sh write them under bench/results/. The planner plans each
 * budget again from the recorded profiles, llama.cpp's recorded compute buffers (`scratchByKey`) and llama.cpp's
 * recorded `common_fit_params` answer; its choice is then looked up among the plans that benchmark measured, and each
 * measured cell (TTFT per prompt length, TPOT) is compared with the fastest plan measured at that budget. So a planner
 * change that would choose worse on a recorded machine fails here, and one that chooses a plan the recording never
 * measured says so (record the machine again) instead of passing.
 *
 * What the replay leaves out: llama.cpp's no-alloc simulation of the final plan (checkWithSimulation in autoPlan.ts
 * needs the machine); a recorded plan that the simulation changed says so in its notes ("replanned", "checked by
 * llama.cpp's simulation"), and {@link replayBudget} refuses such a budget by name rather than compare a different plan.
 */
import fs from "node:fs";
import path from "node:path";
import {isDeepStrictEqual} from "node:util";
import type {BenchPlan, BenchReport, BenchRun, PointKind} from "../../../contract/bench.js";
import {contextKnobs, resolveSettings} from "../../../contract/settings.js";
import {busyMachineNote} from "../../bench/report/summariseReport.js";
import {median} from "../../bench/stats.js";
import type {InspectedModel} from "../../gguf/inspectGguf.js";
import type {MachineProfile} from "../../profiler/MachineProfile.js";
import {planStrategy} from "../planStrategy.js";
import type {FitFunction, StrategyInputs, StrategyResult} from "../strategies/StrategyResult.js";
import {plannerModelFrom} from "../types.js";

/** One recorded benchmark with what it planned from. */
export type RecordedBench = {
    readonly report: BenchReport;
    readonly model: InspectedModel;
    /** The profile of the GPU and the CPU at the benchmark's thread count. */
    readonly profile: MachineProfile;
    /** The CPU timed as a load without the GPU (autoPlan's second Profile pass), when it was recorded. */
    readonly cpuOnlyProfile: MachineProfile | undefined;
    /** The GPU's device name in the profile (`"CUDA0"`, `"Vulkan0"`). */
    readonly gpuDevice: string;
};

/** Reads a recorded benchmark: `files.report` and `files.model` are JSON files, `files.profiles` the profile folder, all under `dir`. */
export function readRecordedBench(dir: string, files: {report: string; model: string; profiles: string}): RecordedBench {
    const read = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")) as T;
    const report = read<BenchReport>(files.report);
    if (report.settings.threads == null)
        throw new Error(`${files.report}: the benchmark chose its thread count per plan; a replay needs one fixed --threads`);
    const profiles = fs.readdirSync(path.join(dir, files.profiles)).filter((name) => name.endsWith(".json")).sort()
        .map((name) => read<MachineProfile>(path.join(files.profiles, name)))
        .filter((p) => p.threads === report.settings.threads);
    const withGpu = profiles.filter((p) => p.devices.some((d) => d.name !== "CPU"));
    const cpuOnly = profiles.filter((p) => p.devices.every((d) => d.name === "CPU"));
    if (withGpu.length !== 1)
        throw new Error(`${files.profiles}: expected one profile with a GPU at ${report.settings.threads} threads, found ${withGpu.length}`);
    if (cpuOnly.length > 1)
        throw new Error(`${files.profiles}: expected at most one CPU-only profile at ${report.settings.threads} threads, found ${cpuOnly.length}`);
    const profile = withGpu[0]!;
    return {report, model: read<InspectedModel>(files.model), profile, cpuOnlyProfile: cpuOnly[0],
        gpuDevice: profile.devices.find((d) => d.name !== "CPU")!.name};
}

/** The parts of a plan that decide what llama.cpp runs (what two plans must share to share a measurement). */
type PlanShape = Pick<BenchPlan, "gpuLayers" | "overrides" | "batchSize" | "contextSize" | "threads" | "useMmap" | "knobs">;

function shapeOfRecorded(plan: BenchPlan): PlanShape {
    const {gpuLayers, overrides, batchSize, contextSize, threads, useMmap, knobs} = plan;
    return {gpuLayers, overrides: overrides.map(({pattern, bufferType}) => ({pattern, bufferType})), batchSize, contextSize, threads, useMmap, knobs: contextKnobs(knobs)};
}

function shapeOfReplayed(result: StrategyResult): PlanShape {
    const {settings} = result;
    return {gpuLayers: result.gpuLayers, overrides: result.overrides.map(({pattern, bufferType}) => ({pattern, bufferType})), batchSize: settings.batchSize,
        contextSize: settings.contextSize, threads: settings.threads, useMmap: settings.useMmap, knobs: contextKnobs(settings)};
}

/** llama.cpp flags of a plan, for messages. */
export function describePlan(plan: PlanShape): string {
    const {knobs} = plan;
    return [knobs.useGpu ? `-ngl ${plan.gpuLayers}` : "--device none", `-ub ${plan.batchSize}`, `-t ${plan.threads}`,
        ...(plan.overrides.length > 0 ? [`${plan.overrides.length} -ot`] : []), ...(knobs.useGpu && !knobs.opOffload ? ["--no-op-offload"] : []),
        ...(knobs.useGpu && !knobs.kvOffload ? ["--no-kv-offload"] : []), `-fa ${knobs.flashAttention ? "on" : "off"}`,
        ...(knobs.kvCacheType !== "f16" ? [`-ctk/-ctv ${knobs.kvCacheType}`] : []), plan.useMmap ? "mmap" : "--no-mmap"].join(" ");
}

/** Notes the bench's autoPlan adds when llama.cpp's simulation changed the optimiser's plan (autoPlan.ts). */
const SIMULATION_CHANGED = ["replanned under", "checked by llama.cpp's simulation, is predicted faster", "running without the GPU (--device none)"];
/**
 * The note of a plan made again under a smaller budget after llama.cpp's simulation put the first over it
 * (autoPlan.ts checkWithSimulation): the replay plans under that budget, as the last step did.
 */
const REPLANNED = /^replanned under ([0-9.]+) MiB after the simulation$/;

/** The runs of one budget that finished. */
function runsAt(recorded: RecordedBench, budget: string): BenchRun[] {
    return recorded.report.runs.filter((r) => r.budget === budget && r.status === "ok" && !r.variant.handTuned && r.variant.devicePlan == null);
}

/**
 * Plans `optimal` at `budget` as the benchmark did (its context, base micro-batch, threads and workload: the longest
 * prompt and reply it measured), from the recorded profiles, compute buffers and `common_fit_params` answer.
 */
export async function replayBudget(recorded: RecordedBench, budget: string): Promise<StrategyResult> {
    const {report} = recorded;
    const all = report.runs.filter((r) => r.budget === budget);
    const optimal = all.find((r) => r.variant.label === "optimal" && r.status === "ok");
    if (optimal == null) throw new Error(`budget ${budget}: the recording has no finished optimal run`);
    const recordedPlan = optimal.loads[0]!.plan;
    const changes = recordedPlan.notes.filter((note) => SIMULATION_CHANGED.some((s) => note.includes(s)));
    const replanned = changes.map((note) => REPLANNED.exec(note)).filter((m) => m != null).at(-1);
    const other = changes.find((note) => !REPLANNED.test(note));
    if (other != null)
        throw new Error(`budget ${budget}: llama.cpp's simulation changed the recorded plan ("${other}"), which a replay without the machine cannot repeat`);
    if (recordedPlan.scratchByKey == null) throw new Error(`budget ${budget}: the recording has no compute buffers (scratchByKey)`);
    const model = plannerModelFrom(recorded.model);
    const settings = resolveSettings({contextSize: report.settings.contextSize, batchSize: report.settings.batchSize, threads: report.settings.threads},
        {maxThreads: report.settings.threads, partlyOnGpu: true, trainedContextSize: recorded.model.contextLength});
    const fitRun = all.find((r) => r.variant.label === "fit");
    const inputs: StrategyInputs = {
        cost: {model, profile: recorded.profile, gpuDevice: recorded.gpuDevice, scratchByKey: new Map(Object.entries(recordedPlan.scratchByKey)),
            scratchContextSize: report.settings.contextSize},
        ...(recorded.cpuOnlyProfile != null ? {cpuOnlyProfile: recorded.cpuOnlyProfile} : {}),
        gpuBufferType: recorded.gpuDevice,
        // the note's budget is rounded to 0.1 MiB: a plan within 52 KiB of that edge may come out otherwise
        budgetBytes: replanned != null ? Math.round(Number(replanned[1]) * 2 ** 20) : optimal.budgetBytes,
        settings,
        workload: {promptTokens: Math.max(...report.settings.prompts), genTokens: Math.max(...report.settings.gens)},
        // the fit baseline only where llama.cpp's fitting ran there; its failure (a budget too small for it) leaves it out, as autoPlan does
        ...(fitRun?.status === "ok" ? {fit: recordedFit(fitRun)} : {})
    };
    return planStrategy("optimal", inputs);
}

/** `common_fit_params` as that run recorded it: the same answer for every target (the replay cannot ask llama.cpp again). */
function recordedFit(run: BenchRun): FitFunction {
    const plan = run.loads[0]!.plan;
    const gpuLayers = plan.gpuLayers === "max" ? -1 : plan.gpuLayers;
    return () => Promise.resolve({gpuLayers, overrides: plan.overrides.map((o): [string, string] => [o.pattern, o.bufferType]), status: "recorded"});
}

/** One measured cell: the planner's choice against the fastest plan measured at that budget. */
export type CellVerdict = {
    /** `ttft@2048`, `tpot@32`, or `request@2048+32`: the workload the budget was planned for (TTFT + (gen − 1) × TPOT). */
    readonly cell: string;
    readonly kind: PointKind | "request";
    readonly tokens: number;
    /** Labels of the measured runs whose plan is the planner's choice (`"layers = optimal"` when they agree). */
    readonly chosen: string;
    readonly chosenMs: number;
    readonly best: string;
    readonly bestMs: number;
    /** chosenMs / bestMs (1 = the choice was the fastest). */
    readonly ratio: number;
};

/** What the replayed choice measured at one budget, cell by cell; `measured` null when no recorded run loaded that plan. */
export type BudgetVerdict = {
    readonly budget: string;
    readonly choice: string;
    /** The recorded runs whose plan is the replayed choice (several strategies may plan the same). */
    readonly measuredAs: readonly string[];
    readonly cells: readonly CellVerdict[] | null;
};

/**
 * Replays `budget` and compares the choice's measured cells with the fastest measured plan's. Runs that loaded the
 * same plan (a baseline the optimiser agrees with) are one plan: its time per cell is the median of all their
 * samples, so a plan measured twice does not lose to its own noise.
 */
export async function judgeBudget(recorded: RecordedBench, budget: string): Promise<BudgetVerdict> {
    refuseBusy(recorded, budget);
    return judgeShape(recorded, budget, shapeOfReplayed(await replayBudget(recorded, budget)));
}

/** {@link judgeBudget} for the plan a recorded run loaded (its label, e.g. `"optimal"`): what that choice measured, cell by cell. */
export function judgeRecordedRun(recorded: RecordedBench, budget: string, label: string): BudgetVerdict {
    refuseBusy(recorded, budget);
    const run = runsAt(recorded, budget).find((r) => r.variant.label === label && r.loads.length === 1);
    if (run == null) throw new Error(`budget ${budget}: the recording has no finished ${label} run`);
    return judgeShape(recorded, budget, shapeOfRecorded(run.loads[0]!.plan));
}

function refuseBusy(recorded: RecordedBench, budget: string): void {
    for (const run of runsAt(recorded, budget)) {
        const busy = busyMachineNote(run);
        if (busy != null) throw new Error(`budget ${budget}: ${run.variant.label} was ${busy}, no record of this machine; record it again when it is idle`);
    }
}

function judgeShape(recorded: RecordedBench, budget: string, choice: PlanShape): BudgetVerdict {
    const plans = new Map<string, {shape: PlanShape; runs: BenchRun[]}>();
    for (const run of runsAt(recorded, budget)) {
        if (run.loads.length !== 1) continue;
        const shape = shapeOfRecorded(run.loads[0]!.plan);
        const key = JSON.stringify(shape);
        plans.set(key, {shape, runs: [...(plans.get(key)?.runs ?? []), run]});
    }
    const label = (runs: readonly BenchRun[]): string => runs.map((r) => r.variant.label).join(" = ");
    const pointMs = (runs: readonly BenchRun[], kind: PointKind, tokens: number): number | null => {
        const samples = runs.flatMap((r) => r.points.filter((p) => p.kind === kind && p.tokens === tokens).flatMap((p) => p.samplesMs));
        return samples.length === 0 ? null : median(samples);
    };
    // the workload the replay plans for: the longest prompt and reply measured
    const {prompts, gens} = recorded.report.settings;
    const [prompt, gen] = [Math.max(...prompts), Math.max(...gens)];
    const requestMs = (runs: readonly BenchRun[]): number | null => {
        const [ttft, tpot] = [pointMs(runs, "ttft", prompt), pointMs(runs, "tpot", gen)];
        return ttft == null || tpot == null ? null : ttft + (gen - 1) * tpot;
    };
    const chosen = [...plans.values()].find((p) => isDeepStrictEqual(p.shape, choice));
    if (chosen == null) return {budget, choice: describePlan(choice), measuredAs: [], cells: null};
    const cellOf = (cell: string, kind: CellVerdict["kind"], tokens: number, timeOf: (runs: readonly BenchRun[]) => number | null): CellVerdict | null => {
        const chosenMs = timeOf(chosen.runs);
        if (chosenMs == null) return null;
        const best = [...plans.values()].flatMap((p) => {
            const ms = timeOf(p.runs);
            return ms == null ? [] : [{label: label(p.runs), ms}];
        }).reduce((a, b) => (b.ms < a.ms ? b : a));
        return {cell, kind, tokens, chosen: label(chosen.runs), chosenMs, best: best.label, bestMs: best.ms, ratio: chosenMs / best.ms};
    };
    const cells = [
        ...chosen.runs[0]!.points.map((point) => cellOf(`${point.kind}@${point.tokens}`, point.kind, point.tokens, (runs) => pointMs(runs, point.kind, point.tokens))),
        cellOf(`request@${prompt}+${gen}`, "request", prompt, requestMs)
    ].filter((c) => c != null);
    return {budget, choice: describePlan(choice), measuredAs: chosen.runs.map((r) => r.variant.label), cells};
}
