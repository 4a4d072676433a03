import type {ModelCard as Card} from "../../../../../../electron/contract/ipc";
import {formatBytes, formatCount} from "../../../../format/format";
import {autoOffload} from "../../../../actions/modelActions";
import {useEngineStore} from "../../../../stores/engineStore";
import {usePlanStore} from "../../../../stores/planStore";
import {useUiStore} from "../../../../stores/uiStore";
import {quantColor} from "./quantColor";
import "./ModelCard.css";

export function ModelCard({card}: {card: Card}) {
    const running = usePlanStore((state) => state.run.status === "running");
    const engineBusy = useEngineStore((state) => state.engine.state === "busy" || state.engine.state === "crashed");
    const busy = running || engineBusy;
    const show = useUiStore((state) => state.show);
    // this very model is loaded and the engine is free: the next step is a reply, not another load
    const ready = usePlanStore((state) => state.loaded?.card.path === card.path) && !busy;
    const totalBytes = card.quantMix.reduce((sum, entry) => sum + entry.bytes, 0) || 1;
    return (
        <section className="panel model-card" data-testid="model-card">
            <div className="model-card-head">
                <div>
                    <h2 data-testid="model-name">{card.name ?? card.fileName}</h2>
                    <div className="faint mono model-card-path">{card.path}</div>
                </div>
                {ready
                    ? <button className="button primary" data-testid="start-chatting" onClick={() => show("chat")}>Start chatting →</button>
                    : <button className="button primary" data-testid="go-offload" disabled={busy}
                        title="Profiles this machine if no saved profile fits it, plans where each weight lives within the GPU memory, and loads the model that way"
                        onClick={() => void autoOffload(card.path)}>{running ? "Loading…" : "⚡ Load — auto-offload"}</button>}
            </div>
            <div className="model-card-stats">
                <div className="stat"><span className="label">Architecture</span><span className="value" data-testid="model-architecture">{card.architecture}</span></div>
                <div className="stat"><span className="label">File size</span><span className="value" data-testid="model-size">{formatBytes(card.fileBytes)}</span></div>
                <div className="stat"><span className="label">Parameters</span><span className="value" data-testid="model-parameters">{formatCount(card.parameterCount)}</span></div>
                {card.experts != null && (
                    <div className="stat"><span className="label">MoE</span><span className="value" data-testid="model-experts">{card.experts.count} experts, {card.experts.used} active</span></div>
                )}
                <div className="stat"><span className="label">Layers</span><span className="value">{card.layerCount ?? "—"}</span></div>
                <div className="stat"><span className="label">Context</span><span className="value">{formatCount(card.contextLength)}</span></div>
                <div className="stat"><span className="label">Embedding</span><span className="value">{card.embeddingLength ?? "—"}</span></div>
                <div className="stat"><span className="label">Vocabulary</span><span className="value">{formatCount(card.vocabularySize)}</span></div>
                <div className="stat"><span className="label">Tensors</span><span className="value">{card.tensors.length}</span></div>
            </div>
            <div className="model-card-quant">
                <h3>Quantization mix</h3>
                <div className="quant-bar" data-testid="quant-mix">
                    {card.quantMix.map((entry) => (
                        <div key={entry.type} className="quant-segment" title={`${entry.type}: ${formatBytes(entry.bytes)}`}
                            style={{width: `${(entry.bytes / totalBytes) * 100}%`, background: quantColor(entry.type)}}/>
                    ))}
                </div>
                <div className="quant-legend">
                    {card.quantMix.map((entry) => (
                        <span key={entry.type} className="quant-legend-item">
                            <span className="swatch" style={{background: quantColor(entry.type)}}/>
                            <b>{entry.type}</b> {formatBytes(entry.bytes)} · {entry.tensors} tensors · {((entry.bytes / totalBytes) * 100).toFixed(1)}%
                        </span>
                    ))}
                </div>
            </div>
        </section>
    );
}
