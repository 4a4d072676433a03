import type {DeviceMemory} from "../../../../../../electron/contract/memory";
import {CapacityBar} from "../CapacityBar/CapacityBar";
import {BufferTypeList} from "../BufferTypeList/BufferTypeList";
import {MemoryTable} from "../MemoryTable/MemoryTable";
import "./DeviceMemoryCard.css";

const sum = (values: (number | null)[]) => values.reduce<number>((total, value) => total + (value ?? 0), 0);

/** One physical memory after a load, as the engine compared it: capacity bar, planned vs measured, buffer types, notes. */
export function DeviceMemoryCard({memory}: {memory: DeviceMemory}) {
    const {planned, measured} = memory;
    return (
        <section className="panel device-memory" data-testid="memory-device" data-device={memory.device} data-kind={memory.kind}
            data-total={memory.totalBytes} data-free={memory.freeAfterLoadBytes} data-budget={memory.budgetBytes ?? ""}
            data-planned-weights={planned?.weightsBytes ?? ""} data-planned-kv={planned?.kvCacheBytes ?? ""} data-planned-scratch={planned?.scratchBytes ?? ""}
            data-measured-weights={measured.weightsBytes} data-measured-kv={measured.kvCacheBytes} data-measured-scratch={measured.scratchBytes} data-embeddings={memory.embeddingsBytes}>
            <div className="row device-memory-head">
                <h2>{memory.name}</h2>
                <span className="pill">{memory.kind === "host" ? "system RAM · every host buffer type" : `GPU memory · ${memory.device}`}</span>
            </div>
            <CapacityBar totalBytes={memory.totalBytes} freeBytes={memory.freeAfterLoadBytes} measured={measured} embeddingsBytes={memory.embeddingsBytes}
                otherBytes={memory.otherBytes}
                budgetBytes={memory.budgetBytes} plannedBytes={planned == null ? null : sum([planned.weightsBytes, planned.kvCacheBytes, planned.scratchBytes])}/>
            <MemoryTable planned={planned} measured={measured}/>
            <BufferTypeList uses={memory.bufferTypes}/>
            {memory.notes.length > 0 && (
                <ul className="device-memory-notes faint" data-testid="memory-notes">
                    {memory.notes.map((note) => <li key={note}>{note}</li>)}
                </ul>
            )}
        </section>
    );
}
