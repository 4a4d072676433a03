import {useMemo, useState} from "react";
import type {BenchDetail, BenchExportFormat} from "../../../../../../electron/contract/ipc";
import {exportBench} from "../../../../actions/benchActions";
import {errorMessage} from "../../../../transport/Transport";
import {BenchChart} from "../BenchChart/BenchChart";
import {chartSeries} from "../BenchChart/chartSeries";
import {PredictionErrors} from "../PredictionErrors/PredictionErrors";
import {ResultsTable} from "../ResultsTable/ResultsTable";
import {SpeedupTable} from "../SpeedupTable/SpeedupTable";

const FORMATS: {format: BenchExportFormat; label: string}[] = [{format: "html", label: "HTML"}, {format: "csv", label: "CSV"}, {format: "json", label: "JSON"}];

/** Where and when a benchmark ran, and its export buttons. */
function BenchReportHead({detail}: {detail: BenchDetail}) {
    const [exported, setExported] = useState<string | null>(null);
    const {summary, report} = detail;
    const doExport = async (format: BenchExportFormat) => {
        try {
            const where = await exportBench(summary.id, format);
            setExported(where == null ? null : `Saved ${where}`);
        } catch (error) {
            setExported(`Export failed: ${errorMessage(error)}`);
        }
    };
    return (
        <div className="bench-detail-head" data-testid="bench-detail" data-status={summary.status}>
            <div>
                <h2>{summary.modelName} <span className={`bench-status status-${summary.status}`}>{summary.status}</span></h2>
                <div className="faint bench-detail-meta">
                    {new Date(report.startedAt).toLocaleString()} · {report.environment.cpu.model} · {report.environment.gpu?.name ?? "no GPU"} · llama.cpp {report.environment.llamaCppRelease}
                </div>
            </div>
            <div className="row bench-export">
                {exported != null && <span className="faint bench-exported" data-testid="bench-exported">{exported}</span>}
                <span className="faint">Export</span>
                {FORMATS.map(({format, label}) => (
                    <button key={format} className="button small" data-testid={`bench-export-${format}`} onClick={() => void doExport(format)}>{label}</button>
                ))}
            </div>
        </div>
    );
}

/** One benchmark's report: its head, every measured point, the TTFT and TPOT charts, speed-ups and prediction errors. */
export function BenchReportView({detail}: {detail: BenchDetail}) {
    const ttft = useMemo(() => chartSeries(detail.report, "ttft"), [detail]);
    const tpot = useMemo(() => chartSeries(detail.report, "tpot"), [detail]);
    return (
        <>
            <BenchReportHead key={detail.summary.id} detail={detail}/>
            <ResultsTable report={detail.report}/>
            <div className="grid-2">
                <BenchChart testId="bench-chart-ttft" title="TTFT vs prompt length" xLabel="prompt tokens" x={ttft.x} series={ttft.series}/>
                <BenchChart testId="bench-chart-tpot" title="TPOT vs generation length" xLabel="generated tokens" x={tpot.x} series={tpot.series}/>
            </div>
            <div className="bench-tables">
                <SpeedupTable report={detail.report} cells={detail.speedups}/>
                <PredictionErrors errors={detail.errors}/>
            </div>
        </>
    );
}
