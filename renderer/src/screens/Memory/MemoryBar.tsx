import {formatBytes} from "../../format/format";

export type MemoryParts = {weights: number; kv: number; scratch: number};

/** One stacked bar: weights / KV cache / scratch, on a scale shared by every row. */
export function MemoryBar({label, parts, scale}: {label: string; parts: MemoryParts | null; scale: number}) {
    const width = (bytes: number) => `${(bytes / scale) * 100}%`;
    return (
        <div className={`memory-bar ${label}`}>
            <span className="memory-bar-label faint">{label}</span>
            <div className="memory-bar-track">
                {parts != null && (
                    <>
                        <div className="segment weights" style={{width: width(parts.weights)}} title={`weights ${formatBytes(parts.weights)}`}/>
                        <div className="segment kv" style={{width: width(parts.kv)}} title={`KV cache ${formatBytes(parts.kv)}`}/>
                        <div className="segment scratch" style={{width: width(parts.scratch)}} title={`scratch ${formatBytes(parts.scratch)}`}/>
                    </>
                )}
            </div>
            <span className="memory-bar-values mono">
                {parts == null ? "—" : `${formatBytes(parts.weights)} · ${formatBytes(parts.kv)} · ${formatBytes(parts.scratch)}`}
            </span>
        </div>
    );
}
