/**
 * Writes benchmark results incrementally: every finished run is appended to results.jsonl and report.json,
 * report.csv and report.html are rewritten (atomically: temp file + rename), so an interrupted or crashed benchmark
 * leaves valid files with everything it finished.
 */
import fs from "node:fs";
import path from "node:path";
import {REPORT_FILES, type BenchReport, type BenchRun} from "../../../contract/bench.js";
import {reportCsv} from "./reportCsv.js";
import {reportHtml} from "./reportHtml.js";
import {TensorwiseError} from "../../../contract/TensorwiseError.js";

/** The files a benchmark writes into its output folder. */

function writeAtomic(file: string, text: string): void {
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, file);
}

/**
 * Creates `outDir` and proves a file can be written there, so a benchmark aimed at a read-only or pseudo file system
 * (`--out /proc/x`) fails at once with a sentence instead of after minutes of profiling.
 */
export function prepareOutDir(outDir: string): void {
    const probe = path.join(outDir, `.write-check.${process.pid}`);
    try {
        fs.mkdirSync(outDir, {recursive: true});
        fs.writeFileSync(probe, "");
        fs.rmSync(probe, {force: true});
    } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? "error";
        throw new TensorwiseError("bad-out-dir", `Cannot write the benchmark's report to ${outDir} (${code}): choose another folder with --out.`);
    }
}

/** Holds the report being built and keeps the files on disk in step with it. */
export class BenchResultStore {
    private current: BenchReport;

    /** Creates `outDir`, starts a fresh results.jsonl with a header line and writes the (empty) reports. */
    constructor(readonly outDir: string, initial: BenchReport) {
        fs.mkdirSync(outDir, {recursive: true});
        this.current = initial;
        const {runs: _runs, ...header} = initial;
        writeAtomic(this.file("jsonl"), JSON.stringify({type: "header", ...header}) + "\n");
        this.rewrite();
    }

    get report(): BenchReport {
        return this.current;
    }

    /** Path of one of the {@link REPORT_FILES}. */
    file(kind: keyof typeof REPORT_FILES): string {
        return path.join(this.outDir, REPORT_FILES[kind]);
    }

    /** Records a finished (or failed) run. */
    addRun(run: BenchRun): void {
        this.current = {...this.current, runs: [...this.current.runs, run]};
        fs.appendFileSync(this.file("jsonl"), JSON.stringify({type: "run", ...run}) + "\n");
        this.rewrite();
    }

    /** Marks the benchmark finished (or interrupted) and writes the final reports. */
    finish(interrupted: boolean): void {
        this.current = {...this.current, finishedAt: new Date().toISOString(), interrupted};
        fs.appendFileSync(this.file("jsonl"), JSON.stringify({type: "end", finishedAt: this.current.finishedAt, interrupted}) + "\n");
        this.rewrite();
    }

    private rewrite(): void {
        writeAtomic(this.file("json"), JSON.stringify(this.current, null, 2) + "\n");
        writeAtomic(this.file("csv"), reportCsv(this.current));
        writeAtomic(this.file("html"), reportHtml(this.current));
    }
}
