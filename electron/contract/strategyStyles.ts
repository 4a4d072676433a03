/**
 * How a placement strategy is named and coloured wherever a person sees it: the app's Offload and Benchmark screens and
 * the exported HTML report import this one table. Colours are mid-tones chosen to read on the dark and the light
 * theme and on the report's white page. A leaf: imports only the strategy names.
 */
import type {PlacementStrategyName} from "./strategies.js";

/** What a benchmark row can be labelled with: a strategy, or a strategy tuned by hand (pinned memory, best micro-batch). */
export type StrategyLabel = PlacementStrategyName | "layers-tuned" | "fit-tuned";

/** How one strategy is shown. */
export type StrategyStyle = {
    /** Short name, as on the command line and in tables (`"layers"`). */
    readonly name: string;
    /** What it is, in a few words (`"llama.cpp layer split (-ngl)"`). */
    readonly title: string;
    /** One sentence on what it does, for legends and tooltips. */
    readonly description: string;
    /** CSS colour of its lines, dots and swatches. */
    readonly color: string;
    /** Drawn dashed in charts (the hand-tuned twins of a baseline). */
    readonly dashed: boolean;
};

const style = (name: string, title: string, description: string, color: string, dashed = false): StrategyStyle =>
    ({name, title, description, color, dashed});

/** Every strategy's name, words and colour. */
export const STRATEGY_STYLES: Readonly<Record<StrategyLabel, StrategyStyle>> = {
    cpu: style("cpu", "CPU only", "Every weight stays in system RAM; the GPU is not used.", "#7c8598"),
    layers: style("layers", "llama.cpp layer split (-ngl)", "Whole layers on the GPU from the last one down, as llama.cpp's -ngl does.", "#3b82f6"),
    fit: style("fit", "llama.cpp --fit", "llama.cpp's own fitting of layers and tensors to the free memory.", "#f97316"),
    "cpu-moe": style("cpu-moe", "llama.cpp --cpu-moe", "Every expert weight of a mixture-of-experts model in system RAM, the rest on the GPU.", "#ca8a04"),
    "n-cpu-moe": style("n-cpu-moe", "llama.cpp --n-cpu-moe N", "The expert weights of the first N layers in system RAM, with the best N that fits.", "#db2777"),
    oato: style("oato", "OATO (per-operator benefit order)",
        "The paper \"OATO: operator-aware tensor offloading\", Algorithm 1: tensors go to the GPU in order of time saved per byte.", "#a855f7"),
    optimal: style("optimal", "tensorwise planner",
        "Prices layer hops, KV cache, scratch, pinned memory and micro-batch size, weighted by the workload.", "#10b981"),
    manual: style("manual", "placement file", "A per-tensor placement written by hand and loaded from a file.", "#64748b"),
    command: style("command", "your llama.cpp command", "The layers, overrides and knobs of a llama.cpp command line you pasted, loaded exactly.", "#e11d48"),
    "layers-tuned": style("layers-tuned", "layer split, hand-tuned", "The layer split with pinned host memory and the best micro-batch per measurement.", "#0ea5e9", true),
    "fit-tuned": style("fit-tuned", "--fit, hand-tuned", "llama.cpp --fit with pinned host memory and the best micro-batch per measurement.", "#f59e0b", true)
};

/** Colour for a label this table does not know (a newer report's strategy). */
const UNKNOWN_COLOR = "#8d96aa";

/** How `label` is shown; an unknown label keeps its own name and a neutral colour. */
export function strategyStyle(label: string): StrategyStyle {
    return Object.hasOwn(STRATEGY_STYLES, label) ? STRATEGY_STYLES[label as StrategyLabel] : style(label, label, "", UNKNOWN_COLOR);
}
