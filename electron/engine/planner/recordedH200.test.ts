/**
 * The planner held to timings measured on a real GPU machine (no GPU needed here): the H200 machine's profile and the
 * model's tensor table as that run wrote them, and what its benchmark measured
 * (bench/results/2026-11-27-h200-partial/README.md). That run measured one cell before its time ran out — budget 25%,
 * `layers` — so this checks the predictions of that cell's plan; a fuller run adds its cells here. Replaying the
 * planner's own choice needs llama.cpp's simulated compute buffers of that machine too (`scratchByKey`, which the
 * benchmark's report does not record yet): without them the scratch formula would let op offload fit at 25%, which the
 * simulation there did not.
 */
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {withDefaultSettings, type ResolvedSettings} from "../../contract/settings.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import type {MachineProfile} from "../profiler/MachineProfile.js";
import {PROFILE_VERSION} from "../profiler/profileMachine.js";
import {requestPredictor} from "./requestPredictor.js";
import {layerSplit} from "./resolvePlacement.js";
import {plannerModelFrom} from "./types.js";

const RUN = path.resolve(import.meta.dirname, "../../../bench/results/2026-11-27-h200-partial");
const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(RUN, file), "utf8")) as T;

type ReportPoint = {kind: "ttft" | "tpot"; tokens: number; medianMs: number};
type ReportLoad = {plan: {gpuLayers: number; overrides: unknown[]; batchSize: number; contextSize: number; threads: number; useMmap: boolean;
    knobs: Pick<ResolvedSettings, "useGpu" | "opOffload" | "kvOffload" | "flashAttention" | "kvCacheType">}};
type Report = {settings: {budgets: unknown}; runs: {variant: {label: string}; budget: unknown; status: string; loads: ReportLoad[]; points: ReportPoint[]}[]};

const report = readJson<Report>("bench-q4_k_m/report.json");
const layersRun = report.runs.find((run) => run.variant.label === "layers" && run.status === "ok")!;
const load = layersRun.loads[0]!;
const model = plannerModelFrom(readJson<InspectedModel>("model-q4_k_m.json"));
// the profile the benchmark planned with: 16 threads, CUDA0 and the CPU (the other files are the thread scan's CPU-only ones)
const profile = readJson<MachineProfile>("profiles/profile-0429b7fea1ef9b01969c.json");
const cost = {model, profile, gpuDevice: "CUDA0"};
const settings: ResolvedSettings = {
    ...withDefaultSettings(), ...load.plan.knobs,
    contextSize: load.plan.contextSize, batchSize: load.plan.batchSize, threads: load.plan.threads, useMmap: load.plan.useMmap
} as ResolvedSettings;

describe("the planner on the recorded H200 machine (bench/results/2026-11-27-h200-partial)", () => {
    it("reads the recorded profile as the current profile format", () => {
        // a profile format change must re-record (or convert) this machine, not silently price it with missing fields
        expect(profile.version).toBe(PROFILE_VERSION);
        expect(profile.devices.map((d) => d.name)).toEqual(["CUDA0", "CPU"]);
        expect(profile.threads).toBe(16);
    });

    it("predicts that plan's measured TTFT (64 and 2048 tokens) and TPOT within 10%", () => {
        const predict = requestPredictor(cost, {resolved: layerSplit(model, load.plan.gpuLayers), settings});
        const measured = (kind: ReportPoint["kind"], tokens: number) => layersRun.points.find((p) => p.kind === kind && p.tokens === tokens)!.medianMs;
        const rows = [
            {what: "TTFT 64", predicted: predict(64, 1).ttftMs, measured: measured("ttft", 64)},
            {what: "TTFT 2048", predicted: predict(2048, 1).ttftMs, measured: measured("ttft", 2048)},
            {what: "TPOT 32", predicted: predict(1, 32).tpotMs, measured: measured("tpot", 32)}
        ];
        for (const row of rows)
            expect(Math.abs(row.predicted - row.measured) / row.measured, `${row.what}: predicted ${row.predicted.toFixed(1)} ms, measured ${row.measured.toFixed(1)} ms`).toBeLessThan(0.10);
    });
});
