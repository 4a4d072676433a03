import type {MemoryTotals} from "../../../../../../electron/contract/memory";
import {formatBytes} from "../../../../format/format";
import "./CapacityBar.css";

/** What one bar shows: the device's capacity, this model's part of it (when loaded) and what the rest is. */
export type CapacityBarProps = {
    totalBytes: number;
    freeBytes: number;
    /** This model's measured memory here; absent before a load. */
    measured?: MemoryTotals;
    /** The server's embedding context here (its own segment after the model's); absent or 0 when there is none. */
    embeddingsBytes?: number;
    /** Used by everything else (capacity − free − this model − the embedding context). */
    otherBytes: number;
    /** Marked on the bar when the plan had a budget here. */
    budgetBytes?: number | null;
    /** The plan's total here, marked on the bar. */
    plannedBytes?: number | null;
};

const SEGMENTS = [
    {key: "weightsBytes", label: "weights", className: "weights"},
    {key: "kvCacheBytes", label: "KV cache", className: "kv"},
    {key: "scratchBytes", label: "scratch", className: "scratch"}
] as const;

/**
 * One physical memory as a bar whose full width is its capacity: this model's weights, KV cache and scratch, then
 * what other programs use, then free memory; the plan's budget and total are marked where they fall.
 */
export function CapacityBar({totalBytes, freeBytes, measured, embeddingsBytes = 0, otherBytes, budgetBytes, plannedBytes}: CapacityBarProps) {
    const share = (bytes: number) => totalBytes > 0 ? Math.min(100, (bytes / totalBytes) * 100) : 0;
    const marker = (bytes: number | null | undefined, className: string, label: string) => bytes == null || totalBytes <= 0 ? null : (
        <div className={`capacity-marker ${className}${share(bytes) > 60 ? " flip" : ""}`} style={{left: `${share(bytes)}%`}} title={`${label}: ${formatBytes(bytes)}`} data-testid={`marker-${className}`}>
            <span className="capacity-marker-label">{label} {formatBytes(bytes)}</span>
        </div>
    );
    return (
        <div className="capacity-bar">
            <div className="capacity-track" role="img" aria-label={`${formatBytes(freeBytes)} free of ${formatBytes(totalBytes)}`}>
                {measured != null && SEGMENTS.map((segment) => measured[segment.key] > 0 && (
                    <div key={segment.key} className={`capacity-segment ${segment.className}`} style={{width: `${share(measured[segment.key])}%`}}
                        title={`${segment.label}: ${formatBytes(measured[segment.key])}`}/>
                ))}
                {embeddingsBytes > 0 && <div className="capacity-segment embeddings" style={{width: `${share(embeddingsBytes)}%`}}
                    title={`the server's embedding context: ${formatBytes(embeddingsBytes)}`} data-testid="segment-embeddings"/>}
                {otherBytes > 0 && <div className="capacity-segment other" style={{width: `${share(otherBytes)}%`}} title={`other programs: ${formatBytes(otherBytes)}`}/>}
                {marker(budgetBytes, "budget", "budget")}
                {marker(plannedBytes, "planned", "planned")}
            </div>
            <div className="capacity-caption muted">
                {measured != null && <span>this model <b>{formatBytes(measured.weightsBytes + measured.kvCacheBytes + measured.scratchBytes)}</b></span>}
                {embeddingsBytes > 0 && <span data-testid="embeddings-bytes">the server's embedding context <b>{formatBytes(embeddingsBytes)}</b></span>}
                <span>other programs <b>{formatBytes(otherBytes)}</b></span>
                <span>free <b data-testid="free-bytes">{formatBytes(freeBytes)}</b>{measured != null ? " after load" : ""}</span>
                <span>capacity <b>{formatBytes(totalBytes)}</b></span>
            </div>
        </div>
    );
}
