import type {PlacementView} from "../../../../../../electron/contract/ipc";
import {bufferTypeColor, bufferTypeLabel} from "../../../../format/bufferTypeColor";
import {formatBytes} from "../../../../format/format";
import {placementGroups} from "./placementGroups";
import "./PlacementMap.css";

/** Layers × tensor roles, each cell coloured by the buffer type its weight lives in; a MoE model's experts as their own block. */
export function PlacementMap({placement}: {placement: PlacementView}) {
    const bufferTypes = Object.entries(placement.bytesPerBufferType).sort(([, a], [, b]) => b - a);
    const groups = placementGroups(placement);
    return (
        <section className="panel placement" data-testid="placement-map">
            <div className="placement-head">
                <h2>Placement map</h2>
                <div className="placement-legend">
                    {bufferTypes.map(([bufferType, bytes]) => (
                        <span key={bufferType} className="placement-legend-item" data-testid="placement-legend-item"
                            data-buffer-type={bufferType} data-bytes={bytes}>
                            <span className="swatch" style={{background: bufferTypeColor(bufferType)}}/>
                            <b>{bufferType}</b> <span className="muted">{bufferTypeLabel(bufferType)} · {formatBytes(bytes)}</span>
                        </span>
                    ))}
                </div>
            </div>
            {groups.map((group) => (
                <div key={group.kind} className="placement-group" data-testid={`placement-group-${group.kind}`}>
                    {groups.length > 1 && (
                        <h3>{group.kind === "experts" ? "Routed experts" : "Dense weights"}
                            <span className="muted">{group.kind === "experts"
                                ? " · all experts of one kind per cell (MUL_MAT_ID reads the selected ones per token)"
                                : " · attention, router, shared experts"}</span></h3>
                    )}
                    <div className="placement-scroll">
                        <table className="placement-grid">
                            <thead>
                                <tr><th/>{group.roles.map((role) => <th key={role}><span>{role}</span></th>)}</tr>
                            </thead>
                            <tbody>
                                {group.rows.map((row, layer) => (
                                    <tr key={layer}>
                                        <th className="placement-layer">{layer}</th>
                                        {row.map((bufferType, index) => (
                                            <td key={index} title={bufferType == null ? "no tensor" : `blk.${layer}.${group.roles[index]} → ${bufferType}`}>
                                                {bufferType != null && <span className="cell" style={{background: bufferTypeColor(bufferType)}}/>}
                                            </td>
                                        ))}
                                    </tr>
                                ))}
                            </tbody>
                        </table>
                    </div>
                </div>
            ))}
            {placement.globals.length > 0 && (
                <div className="placement-globals">
                    <h3>Outside the layers</h3>
                    {placement.globals.map((global) => (
                        <span key={global.name} className="pill"><span className="swatch" style={{background: bufferTypeColor(global.bufferType)}}/>{global.name} → {global.bufferType}</span>
                    ))}
                </div>
            )}
            {placement.overrides.length > 0 && (
                <details className="placement-overrides">
                    <summary>{placement.overrides.length} tensor buffer overrides</summary>
                    <table className="data"><tbody>
                        {placement.overrides.map((override) => (
                            <tr key={override.pattern}><td className="mono">{override.pattern}</td><td className="mono">{override.bufferType}</td></tr>
                        ))}
                    </tbody></table>
                </details>
            )}
        </section>
    );
}
