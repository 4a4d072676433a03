import type {BufferTypeUse} from "../../../../../../electron/contract/memory";
import {bufferTypeColor, bufferTypeLabel} from "../../../../format/bufferTypeColor";
import {formatBytes} from "../../../../format/format";
import "./BufferTypeList.css";

/** The buffer types llama.cpp used on one physical memory, each with its labelled bytes and the plan's weights. */
export function BufferTypeList({uses}: {uses: BufferTypeUse[]}) {
    if (uses.length === 0)
        return null;
    return (
        <ul className="buffer-types">
            {uses.map((use) => (
                <li key={use.bufferType} data-testid="memory-row" data-buffer-type={use.bufferType} data-is-host={String(use.isHost)}
                    data-measured-weights={use.weightsBytes} data-planned-weights={use.plannedWeightsBytes ?? ""}
                    data-measured-kv={use.kvCacheBytes} data-measured-scratch={use.scratchBytes} data-planned-as={use.plannedAs ?? ""}>
                    <span className="swatch" style={{background: bufferTypeColor(use.bufferType, [use])}}/>
                    <span className="buffer-type-name"><b className="mono">{use.bufferType}</b> <span className="faint">{bufferTypeLabel(use.bufferType, [use])}</span></span>
                    <span className="buffer-type-bytes muted">
                        weights <b>{formatBytes(use.weightsBytes)}</b>
                        {use.plannedWeightsBytes != null && <> (planned {formatBytes(use.plannedWeightsBytes)}{use.plannedAs != null ? ` as ${use.plannedAs}` : ""})</>}
                        {" · "}KV cache <b>{formatBytes(use.kvCacheBytes)}</b>{" · "}scratch <b>{formatBytes(use.scratchBytes)}</b>
                    </span>
                </li>
            ))}
        </ul>
    );
}
