import type {MemoryTotals, PlannedTotals} from "../../../../../../electron/contract/memory";
import {formatBytes} from "../../../../format/format";
import "./MemoryTable.css";

const COLUMNS = [
    {key: "weightsBytes", label: "weights", swatch: "weights"},
    {key: "kvCacheBytes", label: "KV cache", swatch: "kv"},
    {key: "scratchBytes", label: "scratch", swatch: "scratch"}
] as const;

/** One number of the table; `null` is a value the plan does not predict. */
function Bytes({bytes, title}: {bytes: number | null; title?: string}) {
    return bytes == null ? <td className="faint" title="The plan predicts no value here">—</td> : <td title={title}>{formatBytes(bytes)}</td>;
}

/** Planned and measured bytes of one physical memory, each number under its label. */
export function MemoryTable({planned, measured}: {planned: PlannedTotals | null; measured: MemoryTotals}) {
    const plannedTotal = planned == null ? null : COLUMNS.reduce((sum, column) => sum + (planned[column.key] ?? 0), 0);
    const measuredTotal = COLUMNS.reduce((sum, column) => sum + measured[column.key], 0);
    return (
        <table className="memory-table">
            <thead>
                <tr>
                    <th/>
                    {COLUMNS.map((column) => <th key={column.key}><span className={`swatch ${column.swatch}`}/>{column.label}</th>)}
                    <th>total</th>
                </tr>
            </thead>
            <tbody className="mono">
                <tr data-testid="planned-row">
                    <th>planned</th>
                    {COLUMNS.map((column) => <Bytes key={column.key} bytes={planned == null ? null : planned[column.key]}/>)}
                    <Bytes bytes={plannedTotal} title={planned != null && (planned.kvCacheBytes == null || planned.scratchBytes == null)
                        ? "The sum of what the plan predicts here (it predicts no KV cache or scratch in system RAM)" : undefined}/>
                </tr>
                <tr data-testid="measured-row">
                    <th>measured</th>
                    {COLUMNS.map((column) => <Bytes key={column.key} bytes={measured[column.key]}/>)}
                    <Bytes bytes={measuredTotal}/>
                </tr>
            </tbody>
        </table>
    );
}
