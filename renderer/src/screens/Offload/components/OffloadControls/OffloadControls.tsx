import type {Budget, PlacementStrategy} from "../../../../../../electron/contract/ipc";
import {usePlanStore} from "../../../../stores/planStore";
import {DEFAULT_RUNTIME_SETTINGS, KV_CACHE_TYPES, type KvCacheType} from "../../../../../../electron/contract/settings";
import type {OffloadKnobs} from "../../../../stores/planStore";
import {useLibraryStore} from "../../../../stores/libraryStore";
import {SPECULATIVE_CHOICES, type SpeculativeChoice} from "../../../../../../electron/contract/speculative";
import {LLAMA_COMMAND_LOADS, LLAMA_COMMAND_MAX_CHARS} from "../../../../../../electron/contract/llamaCommand";
import "./OffloadControls.css";

const strategies: {value: PlacementStrategy; label: string}[] = [
    {value: "optimal", label: "tensorwise (prices hops, KV, scratch, pinned memory)"},
    {value: "oato", label: "OATO (per-op benefit order)"},
    {value: "fit", label: "llama.cpp --fit"},
    {value: "layers", label: "Layer split (-ngl)"},
    {value: "cpu", label: "CPU only"}
];

/** The on/off knobs, each "Auto" (the planner chooses), "On" or "Off", with what llama.cpp flag it is. */
const toggles: {key: Exclude<keyof OffloadKnobs, "kvCacheType">; label: string; hint: string}[] = [
    {key: "useGpu", label: "Use the GPU", hint: "off: llama.cpp's --device none"},
    {key: "opOffload", label: "Op offload", hint: "prompt ops of host weights on the GPU (--no-op-offload)"},
    {key: "kvOffload", label: "KV cache on GPU", hint: "off: -nkvo"},
    {key: "flashAttention", label: "Flash attention", hint: "-fa"}
];

const kvCacheLabels: Record<KvCacheType, string> = {
    f16: "f16 (llama.cpp's default)",
    q8_0: "q8_0 (half the memory; outputs change slightly)",
    q4_0: "q4_0 (a quarter; outputs change more)"
};

const speculativeLabels: Record<SpeculativeChoice, string> = {
    auto: "Auto (planner: n-gram lookup, the draft below, or the model's MTP head, where it pays)",
    off: "Off",
    ngram: "N-gram lookup (--spec-type ngram-map-k)",
    draft: "Draft model (--model-draft)",
    mtp: "The model's MTP head (--spec-type draft-mtp)"
};

/**
 * Speculative decoding: the planner prices each kind the model can run and loads one only where it is predicted faster
 * (its sentence is in the plan's explanation); a draft model is picked from the library.
 */
function SpeculativeControl() {
    const speculative = usePlanStore((state) => state.settings.speculative);
    const setSettings = usePlanStore((state) => state.setSettings);
    const models = useLibraryStore((state) => state.models);
    const loadedPath = usePlanStore((state) => state.loaded?.card.path ?? null);
    const drafts = models.filter((model) => model.missing !== true && model.path !== loadedPath);
    const set = (change: Partial<typeof speculative>) => setSettings({speculative: {...speculative, ...change}});
    return (
        <label className="control control-wide">
            <span className="control-label">Speculative decoding</span>
            <div className="row">
                <select className="select" data-testid="speculative" value={speculative.choice}
                    onChange={(event) => set({choice: event.target.value as SpeculativeChoice})}>
                    {SPECULATIVE_CHOICES.map((choice) => <option key={choice} value={choice}>{speculativeLabels[choice]}</option>)}
                </select>
                {(speculative.choice === "draft" || speculative.choice === "auto") && (
                    <select className="select" data-testid="speculative-draft" value={speculative.draftPath ?? ""}
                        onChange={(event) => set({draftPath: event.target.value === "" ? null : event.target.value})}>
                        <option value="">{speculative.choice === "draft" ? "Pick a draft model from the library…" : "No draft model"}</option>
                        {drafts.map((model) => <option key={model.path} value={model.path}>{model.fileName}</option>)}
                    </select>
                )}
            </div>
            <span className="control-hint faint">
                {speculative.choice === "draft" && speculative.draftPath == null
                    ? "a draft model of the same tokenizer, smaller than the model: pick one, or Auto-offload loads without speculation"
                    : "a cheap predictor proposes tokens and the model checks them in one batch; greedy replies are unchanged"}
            </span>
        </label>
    );
}

/**
 * Advanced: a llama.cpp command line (llama-server, llama-cli or llama-bench) the user already runs, priced beside the
 * plan when Auto-offload plans; the user chooses which of the two to load.
 */
function LlamaCommandControl() {
    const command = usePlanStore((state) => state.settings.llamaCommand);
    const setSettings = usePlanStore((state) => state.setSettings);
    const set = (change: Partial<typeof command>) => setSettings({llamaCommand: {...command, ...change}});
    return (
        <details className="control control-wide llama-command" open={command.line !== ""}>
            <summary className="control-label">Advanced: price your llama.cpp command beside the plan</summary>
            <textarea className="input llama-command-line" data-testid="llama-command" rows={3} spellCheck={false}
                maxLength={LLAMA_COMMAND_MAX_CHARS} value={command.line}
                placeholder={"llama-server -m model.gguf -ngl 99 -ot '\\.ffn_.*_exps\\.=CPU' -c 8192 -fa on"}
                onChange={(event) => set({line: event.target.value})}/>
            <div className="row">
                <span className="control-hint">Auto-offload loads</span>
                <div className="segmented" role="radiogroup">
                    {LLAMA_COMMAND_LOADS.map((load) => (
                        <button key={load} type="button" role="radio" aria-checked={command.load === load} data-testid={`llama-command-load-${load}`}
                            className={command.load === load ? "active" : ""} disabled={command.line.trim() === "" && load === "command"} onClick={() => set({load})}>
                            {load === "plan" ? "the plan" : "my command"}
                        </button>
                    ))}
                </div>
            </div>
            <span className="control-hint faint">
                read as llama.cpp reads it: memory by llama.cpp&apos;s own simulation, TTFT and TPOT by this machine&apos;s profile; flags it cannot price are named
            </span>
        </details>
    );
}

/** Manual controls: GPU budget, context size, micro-batch size, strategy, and the llama.cpp knobs the planner would otherwise choose. */
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
            {toggles.map(({key, label, hint}) => (
                <label key={key} className="control">
                    <span className="control-label">{label}</span>
                    <select className="select" data-testid={`knob-${key}`} value={settings.knobs[key] == null ? "auto" : settings.knobs[key] ? "on" : "off"}
                        onChange={(event) => setSettings({knobs: {...settings.knobs, [key]: event.target.value === "auto" ? null : event.target.value === "on"}})}>
                        <option value="auto">Auto (planner)</option>
                        <option value="on">On</option>
                        <option value="off">Off</option>
                    </select>
                    <span className="control-hint faint">{hint}</span>
                </label>
            ))}
            <label className="control">
                <span className="control-label">KV cache type</span>
                <select className="select" data-testid="knob-kvCacheType" value={settings.knobs.kvCacheType}
                    onChange={(event) => setSettings({knobs: {...settings.knobs, kvCacheType: event.target.value as KvCacheType}})}>
                    {KV_CACHE_TYPES.map((type) => <option key={type} value={type}>{kvCacheLabels[type]}</option>)}
                </select>
                <span className="control-hint faint">{settings.knobs.kvCacheType === "f16" ? "-ctk/-ctv" : "needs flash attention (Auto or On)"}</span>
            </label>
            <SpeculativeControl/>
            <LlamaCommandControl/>
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
