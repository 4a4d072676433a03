import type {MemoryReport} from "../../../../electron/contract/ipc";
import {bufferTypeColor, bufferTypeLabel} from "../../format/bufferTypeColor";
import {formatBytes} from "../../format/format";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {MemoryBar, type MemoryParts} from "./MemoryBar";
import "./Memory.css";
import {isHostBufferType} from "../../../../electron/contract/memory";

type BufferTypeMemory = MemoryReport["bufferTypes"][number];
type Row = {bufferType: string; device: string; isHost: boolean; planned: MemoryParts | null; measured: MemoryParts | null; plannedAs?: string};

/**
 * A plan says "CPU" for host memory; with a GPU present and mmap off, llama.cpp puts those tensors in the GPU's pinned
 * host buffer type (Vulkan_Host, CUDA_Host). When exactly one host buffer type holds weights, the planned CPU row is
 * shown on it, so planned and measured line up.
 */
function mergePlannedCpu(rows: Map<string, Row>): void {
    const cpu = rows.get("CPU");
    if (cpu == null || cpu.measured != null || cpu.planned == null)
        return;
    const hosts = [...rows.values()].filter((row) => row.isHost && (row.measured?.weights ?? 0) > 0);
    const target = hosts.length === 1 ? hosts[0] : undefined;
    if (target == null || target.bufferType === "CPU" || target.planned != null)
        return;
    rows.set(target.bufferType, {...target, planned: cpu.planned, plannedAs: "CPU"});
    rows.delete("CPU");
}

function parts(entry: BufferTypeMemory): MemoryParts {
    return {weights: entry.weightsBytes, kv: entry.kvCacheBytes, scratch: entry.scratchBytes};
}

const total = (memory: MemoryParts | null) => memory == null ? 0 : memory.weights + memory.kv + memory.scratch;

export function Memory() {
    const loaded = usePlanStore((state) => state.loaded);
    const machine = useEngineStore((state) => state.machine);
    const show = useUiStore((state) => state.show);

    const rows = new Map<string, Row>();
    for (const entry of loaded?.prediction?.memory.bufferTypes ?? [])
        rows.set(entry.bufferType, {bufferType: entry.bufferType, device: entry.device, isHost: entry.isHost, planned: parts(entry), measured: null});
    // without a full memory prediction, the plan still says where the weights go
    if (loaded != null && loaded.prediction == null)
        for (const [bufferType, bytes] of Object.entries(loaded.placement.bytesPerBufferType))
            rows.set(bufferType, {bufferType, device: bufferType, isHost: isHostBufferType(bufferType, loaded.measured.bufferTypes), planned: {weights: bytes, kv: 0, scratch: 0}, measured: null});
    for (const entry of loaded?.measured.bufferTypes ?? []) {
        const row = rows.get(entry.bufferType);
        rows.set(entry.bufferType, {bufferType: entry.bufferType, device: entry.device, isHost: entry.isHost, planned: row?.planned ?? null, measured: parts(entry)});
    }
    mergePlannedCpu(rows);
    const ordered = [...rows.values()].sort((a, b) => Number(a.isHost) - Number(b.isHost) || a.bufferType.localeCompare(b.bufferType));
    const scale = Math.max(1, ...ordered.map((row) => Math.max(total(row.planned), total(row.measured))));

    return (
        <div className="screen memory-screen">
            <div className="screen-header">
                <div>
                    <h1>Memory</h1>
                    <p>Where the bytes went, per device and buffer type: weights, KV cache and scratch (compute buffers) — planned before load, measured by llama.cpp after.</p>
                </div>
                <div className="memory-legend">
                    <span><span className="swatch weights"/>weights</span>
                    <span><span className="swatch kv"/>KV cache</span>
                    <span><span className="swatch scratch"/>scratch</span>
                </div>
            </div>
            <div className="stack">
                {machine != null && (
                    <section className="memory-devices">
                        {machine.devices.map((device) => (
                            <div key={device.name} className="panel memory-device" data-testid="device-free" data-device={device.name}>
                                <div className="row memory-device-head">
                                    <b>{device.description || device.name}</b><span className="pill">{device.type} · {device.bufferType ?? device.name}</span>
                                </div>
                                <FreeBar free={device.freeBytes} total={device.totalBytes}/>
                            </div>
                        ))}
                        <div className="panel memory-device" data-testid="ram-free">
                            <div className="row memory-device-head"><b>System RAM</b><span className="pill">{machine.cpu.cores} cores</span></div>
                            <FreeBar free={machine.ram.freeBytes} total={machine.ram.totalBytes}/>
                        </div>
                    </section>
                )}
                {loaded == null ? (
                    <div className="notice">
                        <p>No model is loaded, so nothing is allocated yet.</p>
                        <button className="button primary" onClick={() => show("offload")}>Go to Auto-offload</button>
                    </div>
                ) : (
                    <section className="panel memory-table" data-testid="memory-panel">
                        <div className="memory-totals">
                            <Totals label="Device (VRAM)" measured={loaded.measured.device} planned={loaded.prediction?.memory.device}/>
                            <Totals label="Host (RAM)" measured={loaded.measured.host} planned={loaded.prediction?.memory.host}/>
                        </div>
                        {ordered.map((row) => (
                            <div key={row.bufferType} className="memory-row" data-testid="memory-row" data-buffer-type={row.bufferType}
                                data-is-host={String(row.isHost)} data-measured-weights={row.measured?.weights ?? ""}
                                data-planned-weights={row.planned?.weights ?? ""} data-measured-kv={row.measured?.kv ?? ""}
                                data-measured-scratch={row.measured?.scratch ?? ""} data-planned-kv={row.planned?.kv ?? ""}
                                data-planned-scratch={row.planned?.scratch ?? ""}>
                                <div className="memory-row-name">
                                    <span className="swatch" style={{background: bufferTypeColor(row.bufferType)}}/>
                                    <div><b>{row.bufferType}</b><div className="faint">{bufferTypeLabel(row.bufferType)} · {row.device}</div>
                                        {row.plannedAs != null && <div className="faint" title="llama.cpp places host tensors in the device's pinned buffer when mmap is off">planned as {row.plannedAs}</div>}</div>
                                </div>
                                <div className="memory-row-bars">
                                    <MemoryBar label="planned" parts={row.planned} scale={scale}/>
                                    <MemoryBar label="measured" parts={row.measured} scale={scale}/>
                                </div>
                            </div>
                        ))}
                    </section>
                )}
            </div>
        </div>
    );
}

function FreeBar({free, total: all}: {free: number; total: number}) {
    const used = Math.max(0, all - free);
    return (
        <div className="free-bar">
            <div className="free-track"><div className="free-used" style={{width: `${all > 0 ? (used / all) * 100 : 0}%`}}/></div>
            <div className="muted free-label"><b>{formatBytes(free)}</b> free of {formatBytes(all)}</div>
        </div>
    );
}

function Totals({label, measured, planned}: {label: string; measured: {weightsBytes: number; kvCacheBytes: number; scratchBytes: number}; planned?: {weightsBytes: number; kvCacheBytes: number; scratchBytes: number}}) {
    const sum = (value?: {weightsBytes: number; kvCacheBytes: number; scratchBytes: number}) => value == null ? null : value.weightsBytes + value.kvCacheBytes + value.scratchBytes;
    return (
        <div className="stat">
            <span className="label">{label}</span>
            <span className="value">{formatBytes(sum(measured))}</span>
            <span className="faint">planned {formatBytes(sum(planned))}</span>
        </div>
    );
}
