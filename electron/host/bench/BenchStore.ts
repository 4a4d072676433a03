/**
 * Benchmarks on disk: one folder per benchmark under the host's data dir (`<dataDir>/bench/<id>/`), holding the
 * report files the engine's BenchResultStore rewrites after every run. Reads only; the engine writes.
 */
import {promises as fs} from "node:fs";
import path from "node:path";
import {isBenchExportFormat, REPORT_FILES, type BenchDetail, type BenchReport, type BenchSummary} from "../../contract/bench.js";
import {predictionErrors, speedups} from "../../engine/bench/report/summariseReport.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

const ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

/** The model's file name without `.gguf`. */
function modelName(report: BenchReport): string {
    return path.basename(report.model.path).replace(/\.gguf$/i, "");
}

/** A summary of one report; `running` when the host knows the engine is still writing it. */
export function summariseBench(id: string, report: BenchReport, running: boolean): BenchSummary {
    return {
        id, modelName: modelName(report), modelPath: report.model.path, startedAt: report.startedAt, finishedAt: report.finishedAt,
        status: running ? "running" : report.finishedAt == null ? "incomplete" : report.interrupted ? "interrupted" : "done",
        plannedRuns: report.plannedRuns, finishedRuns: report.runs.length,
        failedRuns: report.runs.filter((run) => run.status === "failed").length,
        budgets: [...report.settings.budgets], strategies: report.settings.variants.map((variant) => variant.label),
        backend: report.environment.backend
    };
}

export class BenchStore {
    constructor(readonly dir: string) {}

    /** The folder of benchmark `id`; throws `bad-request` for an id that is not a plain name. */
    folder(id: string): string {
        if (!ID_PATTERN.test(id))
            throw new TensorwiseError("bad-request", `not a benchmark id: ${id}`);
        return path.join(this.dir, id);
    }

    /** Every benchmark with a readable report, newest first. */
    async list(runningId: string | null): Promise<BenchSummary[]> {
        let names: string[];
        try {
            names = await fs.readdir(this.dir);
        } catch {
            return [];
        }
        const summaries = await Promise.all(names.filter((name) => ID_PATTERN.test(name)).map(async (id) => {
            const report = await this.readReport(id).catch(() => null);
            return report == null ? null : summariseBench(id, report, id === runningId);
        }));
        return summaries.filter((summary): summary is BenchSummary => summary != null)
            .sort((a, b) => b.startedAt.localeCompare(a.startedAt));
    }

    async get(id: string, runningId: string | null): Promise<BenchDetail> {
        const report = await this.readReport(id);
        return {summary: summariseBench(id, report, id === runningId), report, speedups: speedups(report), errors: predictionErrors(report)};
    }

    /** The report file of one format and a file name to save it under. */
    async exportFile(id: string, format: unknown): Promise<{path: string; fileName: string}> {
        if (!isBenchExportFormat(format))
            throw new TensorwiseError("bad-request", `"format" must be html, csv or json (got ${String(format)})`);
        const report = await this.readReport(id);
        const file = path.join(this.folder(id), REPORT_FILES[format]);
        try {
            await fs.access(file);
        } catch {
            throw new TensorwiseError("not-found", `benchmark ${id} has no ${REPORT_FILES[format]}`);
        }
        const stamp = report.startedAt.replace(/[-:]/g, "").replace("T", "-").slice(0, 13);
        const safeModel = modelName(report).replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);
        return {path: file, fileName: `tensorwise-bench-${safeModel}-${stamp}.${format}`};
    }

    private async readReport(id: string): Promise<BenchReport> {
        const file = path.join(this.folder(id), REPORT_FILES.json);
        let text: string;
        try {
            text = await fs.readFile(file, "utf8");
        } catch {
            throw new TensorwiseError("not-found", `no benchmark ${id}`);
        }
        const report = JSON.parse(text) as BenchReport;
        if (report?.version !== 1 || !Array.isArray(report.runs))
            throw new TensorwiseError("bad-report", `benchmark ${id} has an unreadable report`);
        return report;
    }
}
