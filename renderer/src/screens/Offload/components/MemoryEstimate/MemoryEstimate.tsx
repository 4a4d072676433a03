import type {MemoryReport} from "../../../../../../electron/contract/ipc";
import {plannedScratchBytes} from "../../../../../../electron/contract/memory";
import {bufferTypeColor} from "../../../../format/bufferTypeColor";
import {formatBytes} from "../../../../format/format";
import "./MemoryEstimate.css";

/**
 * The plan's memory per device before loading: weights, KV cache and scratch per buffer type, as the planner's check
 * with llama.cpp's no-alloc simulation predicts them (the Memory screen compares them with what was allocated).
 */
export function MemoryEstimate({memory}: {memory: MemoryReport}) {
    const rows = [...memory.bufferTypes].sort((a, b) => Number(a.isHost) - Number(b.isHost));
    return (
        <table className="memory-estimate" data-testid="memory-estimate">
            <thead>
                <tr><th>Device</th><th>Weights</th><th>KV cache</th><th>Scratch</th><th>Total</th></tr>
            </thead>
            <tbody>
                {rows.map((row) => (
                    <tr key={row.bufferType} data-testid="memory-estimate-row" data-buffer-type={row.bufferType}
                        data-bytes={row.weightsBytes + row.kvCacheBytes + row.scratchBytes}>
                        <td><span className="swatch" style={{background: bufferTypeColor(row.bufferType)}}/> <b>{row.bufferType}</b>
                            <span className="muted"> {row.isHost ? "host memory" : "device memory"}</span></td>
                        <td>{formatBytes(row.weightsBytes)}</td>
                        <td>{formatBytes(row.kvCacheBytes)}</td>
                        <td>{plannedScratchBytes(row) == null
                            ? <span className="muted" title="Not priced: with a GPU running part of the graph, the plan prices only the GPU's compute buffer. The Memory screen shows what llama.cpp allocated.">–</span>
                            : formatBytes(row.scratchBytes)}</td>
                        <td><b>{formatBytes(row.weightsBytes + row.kvCacheBytes + row.scratchBytes)}</b></td>
                    </tr>
                ))}
            </tbody>
        </table>
    );
}
