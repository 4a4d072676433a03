import type {Budget, PlacementStrategy} from "../../../../../../electron/contract/ipc";
import {usePlanStore} from "../../../../stores/planStore";
import {DEFAULT_RUNTIME_SETTINGS} from "../../../../../../electron/contract/settings";
import "./OffloadControls.css";

const strategies: {value: PlacementStrategy; label: string}[] = [
    {value: "optimal", label: "tensorwise (prices hops, KV, scratch, pinned memory)"},
    {value: "oato", label: "OATO (per-op benefit order)"},
    {value: "fit", label: "llama.cpp --fit"},
    {value: "layers", label: "Layer split (-ngl)"},
    {value: "cpu", label: "CPU only"}
];

/** Manual controls: GPU budget, context size, micro-batch size, strategy. */
export function OffloadControls({disabled}: {disabled: boolean}) {
    const settings = usePlanStore((state) => state.settings);
    const setSettings = usePlanStore((state) => state.setSettings);
    const budget = settings.budget;
    const setBudgetKind = (kind: Budget["kind"]) => setSettings({
        budget: kind === "auto" ? {kind} : kind === "mib" ? {kind, mib: budget.kind === "mib" ? budget.mib : 1024} : {kind, percent: budget.kind === "percent" ? budget.percent : 50}
    });
    return (
        <fieldset className="offload-controls" disabled={disabled}>
            <label className="control">
                <span className="control-label">GPU budget</span>
                <div className="row">
                    <div className="segmented" role="radiogroup">
                        {(["auto", "mib", "percent"] as const).map((kind) => (
                            <button key={kind} type="button" role="radio" aria-checked={budget.kind === kind} data-testid={`budget-${kind}`}
                                className={budget.kind === kind ? "active" : ""} onClick={() => setBudgetKind(kind)}>
                                {kind === "auto" ? "Auto" : kind === "mib" ? "MiB" : "% of weights"}
                            </button>
                        ))}
                    </div>
                    {budget.kind === "mib" && (
                        <input className="input" type="number" min={0} step={64} data-testid="budget-value" value={budget.mib}
                            onChange={(event) => setSettings({budget: {kind: "mib", mib: Math.max(0, Number(event.target.value) || 0)}})}/>
                    )}
                    {budget.kind === "percent" && (
                        <input className="input" type="number" min={0} max={100} step={5} data-testid="budget-value" value={budget.percent}
                            onChange={(event) => setSettings({budget: {kind: "percent", percent: Math.min(100, Math.max(0, Number(event.target.value) || 0))}})}/>
                    )}
                </div>
                <span className="control-hint faint">{budget.kind === "auto" ? "free device memory minus a safety margin" : budget.kind === "mib" ? "device memory the plan may use" : "share of the weights kept on the device"}</span>
            </label>
            <label className="control">
                <span className="control-label">Context size</span>
                <input className="input" type="number" min={256} step={256} data-testid="context-size" value={settings.contextSize ?? ""}
                    placeholder={String(DEFAULT_RUNTIME_SETTINGS.contextSize)}
                    onChange={(event) => setSettings({contextSize: event.target.value === "" ? null : Math.max(256, Number(event.target.value) || 256)})}/>
                <span className="control-hint faint">tokens of KV cache; empty: {DEFAULT_RUNTIME_SETTINGS.contextSize}, or what the model was trained for where less</span>
            </label>
            <label className="control">
                <span className="control-label">Batch size</span>
                <input className="input" type="number" min={32} step={32} data-testid="batch-size" value={settings.batchSize}
                    onChange={(event) => setSettings({batchSize: Math.max(32, Number(event.target.value) || 32)})}/>
                <span className="control-hint faint">prompt micro-batch</span>
            </label>
            <label className="control control-wide">
                <span className="control-label">Strategy</span>
                <select className="select" data-testid="strategy" value={settings.strategy}
                    onChange={(event) => setSettings({strategy: event.target.value as PlacementStrategy})}>
                    {strategies.map((strategy) => <option key={strategy.value} value={strategy.value}>{strategy.label}</option>)}
                </select>
            </label>
        </fieldset>
    );
}
