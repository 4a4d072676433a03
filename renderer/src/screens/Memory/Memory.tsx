import type {MachineDescription} from "../../../../electron/contract/machine";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {CapacityBar} from "./components/CapacityBar/CapacityBar";
import {DeviceMemoryCard} from "./components/DeviceMemoryCard/DeviceMemoryCard";
import "./Memory.css";

/**
 * Where the bytes went, per physical memory (system RAM and each GPU) against its capacity: weights, KV cache and
 * scratch as planned and as llama.cpp measured them. The engine makes the comparison (comparePlannedMemory.ts); this
 * screen only draws it.
 */
export function Memory() {
    const loaded = usePlanStore((state) => state.loaded);
    const machine = useEngineStore((state) => state.machine);
    return (
        <div className="screen memory-screen">
            <div className="screen-header">
                <div>
                    <h1>Memory</h1>
                    <p>Each bar is one physical memory at its full capacity: this model's weights, KV cache and scratch (compute buffers) as llama.cpp measured them after loading, what other programs use, and what is free.</p>
                </div>
                <MemoryLegend/>
            </div>
            <div className="stack">
                {loaded != null
                    ? loaded.memory.devices.map((memory) => <DeviceMemoryCard key={memory.device} memory={memory}/>)
                    : <NothingLoaded machine={machine}/>}
            </div>
        </div>
    );
}

function MemoryLegend() {
    return (
        <div className="memory-legend" data-testid="memory-legend">
            <span><span className="swatch weights"/>weights</span>
            <span><span className="swatch kv"/>KV cache</span>
            <span><span className="swatch scratch"/>scratch</span>
            <span><span className="swatch embeddings"/>server's embedding context</span>
            <span><span className="swatch other"/>other programs</span>
            <span><span className="legend-line budget"/>budget</span>
            <span><span className="legend-line planned"/>planned</span>
        </div>
    );
}

/** Before a load: each memory's capacity and what is free now, and the way to load a model. */
function NothingLoaded({machine}: {machine: MachineDescription | null}) {
    const show = useUiStore((state) => state.show);
    const gpus = machine?.devices.filter((device) => device.type !== "cpu") ?? [];
    return (
        <>
            <div className="notice">
                <p>No model is loaded, so nothing is allocated yet.</p>
                <button className="button primary" onClick={() => show("offload")}>Go to Auto-offload</button>
            </div>
            {machine != null && [{device: "CPU", name: "System RAM", total: machine.ram.totalBytes, free: machine.ram.freeBytes},
                ...gpus.map((gpu) => ({device: gpu.name, name: gpu.description || gpu.name, total: gpu.totalBytes, free: gpu.freeBytes}))].map((memory) => (
                <section key={memory.device} className="panel device-memory" data-testid="memory-device" data-device={memory.device}>
                    <h2>{memory.name}</h2>
                    <CapacityBar totalBytes={memory.total} freeBytes={memory.free} otherBytes={Math.max(0, memory.total - memory.free)}/>
                </section>
            ))}
        </>
    );
}
