import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {whileCoresBusy} from "../testing/busyCores.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {CSV_COLUMNS} from "./report/reportCsv.js";
import {busyMachineNote} from "./report/summariseReport.js";
import {runBench, type RunBenchOptions} from "./runBench.js";
import type {BenchReport} from "../../contract/bench.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] bench CPU run: ${probe.reason}`);

function readOutputs(dir: string): {report: BenchReport; csv: string[]; jsonl: {type: string}[]; html: string} {
    return {
        report: JSON.parse(fs.readFileSync(path.join(dir, "report.json"), "utf8")) as BenchReport,
        csv: fs.readFileSync(path.join(dir, "report.csv"), "utf8").trimEnd().split("\n"),
        jsonl: fs.readFileSync(path.join(dir, "results.jsonl"), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as {type: string}),
        html: fs.readFileSync(path.join(dir, "report.html"), "utf8")
    };
}

describe.skipIf(probe.reason != null)("tensorwise bench on the tiny synthetic model, CPU only (real runtime)", () => {
    let engine: EngineLlama;
    let base: Omit<RunBenchOptions, "outDir">;
    const outRoot = fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-bench-"));

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("bench-tiny", {preset: "tiny", type: "q8_0"});
        base = {
            modelPath, budgets: [{label: "50%", budget: {kind: "percent", percent: 50}}], prompts: [8, 16], gens: [4],
            variants: [{label: "cpu", strategy: "cpu", handTuned: false}, {label: "layers", strategy: "layers", handTuned: false}],
            repeats: 1, threads: 2, warmupTokens: 2
        };
    });
    afterAll(async () => {
        await engine?.llama.dispose();
        fs.rmSync(outRoot, {recursive: true, force: true});
    });

    it("writes report.json/csv/html and results.jsonl with positive measurements for every cell", async () => {
        const outDir = path.join(outRoot, "full");
        const progress: string[] = [];
        const report = await runBench(engine, {...base, outDir, onProgress: (m) => progress.push(m)});
        expect(report.interrupted).toBe(false);
        expect(report.runs.map((r) => [r.variant.label, r.status, r.error])).toEqual([["cpu", "ok", null], ["layers", "ok", null]]);
        for (const run of report.runs) {
            expect(run.points.map((p) => `${p.kind}${p.tokens}`)).toEqual(["ttft8", "ttft16", "tpot4"]);
            for (const p of run.points) {
                expect(p.medianMs).toBeGreaterThan(0);
                expect(p.tokensPerSec).toBeGreaterThan(0);
                expect(p.samplesMs).toHaveLength(1);
            }
            const load = run.loads[0]!;
            expect(load.memory!.host.weightsBytes).toBeGreaterThan(0);
            expect(load.memory!.host.kvCacheBytes).toBeGreaterThan(0);
            expect(load.reproduce.bench).toMatch(/^llama-bench -m \S+ -ngl 0 .*-p 8,16 -n 4 -r 1 -o json$/);
        }
        expect(progress.some((m) => m.includes("[2/2] budget 50% · layers"))).toBe(true);

        const files = readOutputs(outDir);
        expect(files.report.runs).toHaveLength(2);
        expect(files.report.finishedAt).not.toBeNull();
        expect(files.report.environment.llamaCppRelease).not.toBe("");
        expect(files.report.environment.nodeLlamaCppVersion).toBe("3.22.1");
        expect(files.report.model.weightBytes).toBeGreaterThan(0);
        expect(files.csv[0]).toBe(CSV_COLUMNS.join(","));
        expect(files.csv).toHaveLength(1 + 2 * 3);
        expect(files.jsonl.map((l) => l.type)).toEqual(["header", "run", "run", "end"]);
        expect(files.html).toContain("<svg");
    });

    it("a run measured while other programs keep every core busy says so in the report and its HTML (the CLI prints the same note)", async () => {
        // a benchmark taken during a build or a video call: its numbers are the busy machine's, and the report says so
        const outDir = path.join(outRoot, "busy");
        const cores = os.cpus().length;
        // enough measuring (over 200 ms) for the CPU counters to tell
        const report = await whileCoresBusy(cores, () =>
            runBench(engine, {...base, outDir, variants: [base.variants[0]!], prompts: [256], gens: [32], repeats: 5, threads: cores}));
        const run = report.runs[0]!;
        expect(run.cpuContention?.cores).toBe(cores);
        const note = busyMachineNote(run);
        expect(note).toMatch(/^measured while other programs kept \d+\.\d of \d+ CPU cores busy$/);
        expect(readOutputs(outDir).report.runs[0]!.cpuContention).toEqual(run.cpuContention);
        expect(readOutputs(outDir).html).toContain(note!);
    });

    it("an interrupted run keeps what it finished: abort after the first cell, the files stay valid", async () => {
        const outDir = path.join(outRoot, "interrupted");
        const controller = new AbortController();
        const report = await runBench(engine, {...base, outDir, signal: controller.signal, onRun: () => controller.abort()});
        expect(report.interrupted).toBe(true);
        expect(report.runs).toHaveLength(1);
        expect(report.runs[0]!.status).toBe("ok");

        const files = readOutputs(outDir);
        expect(files.report.interrupted).toBe(true);
        expect(files.report.plannedRuns).toBe(2);
        expect(files.report.runs).toHaveLength(1);
        expect(files.csv).toHaveLength(1 + 3);
        expect(files.jsonl.map((l) => l.type)).toEqual(["header", "run", "end"]);
        expect(files.html).toContain("interrupted after 1 of 2 runs");
    });
});
