/**
 * tensorwise's plan (the output of `tensorwise plan --json`) as a stock llama-bench configuration, read generically:
 * every field of the plan is either mapped to a llama-bench flag, or known to describe the plan without changing what
 * llama.cpp runs — and any other field is refused, so a knob the planner gains is never silently dropped from the
 * comparison (add it to {@link SETTINGS} or {@link TOP_LEVEL} with its flag).
 *
 * The plan's own llama.cpp command (`llamaCppFlags.argv`) is checked the same way: each of its non-placement flags must
 * be known and agree with what the fields say.
 */
import {cliBufferTypeName} from "../../placement/llamaCppFlags.js";
import {normaliseConfig, type KvCacheType, type RegretConfig} from "./regretConfig.js";

/** A plan field this benchmark does not know how to run (see the file comment). */
export class UnknownPlanField extends Error {}

/** The planner found no plan within the budget (`fits: false`); the message is its reason. */
export class PlanDoesNotFit extends Error {}

/**
 * What tensorwise's runtime does where a plan says nothing (PlacedModel.load: flash attention off, f16 KV, …) — plans
 * from before the knobs existed.
 */
export const RUNTIME_DEFAULTS = {opOffload: true, typeK: "f16", typeV: "f16", flashAttention: false, kvOffload: true, hideGpu: false} as const;

type Mutable<T> = {-readonly [K in keyof T]: T[K]};
type Draft = Mutable<RegretConfig> & {contextSize?: number};

/** Top-level fields of `plan --json`: `"config"` ones are mapped below; `"info"` ones describe the plan only. */
const TOP_LEVEL: Readonly<Record<string, "config" | "info">> = {
    gpuLayers: "config", settings: "config", overrides: "config",
    // derived from the three above (placement: the same plan per tensor) or commentary
    strategy: "info", fits: "info", reason: "info", prediction: "info", bytesPerBufferType: "info", placement: "info",
    llamaCppFlags: "info", notes: "info", explanation: "info"
};

/** `settings` fields → how they set the configuration. */
const SETTINGS: Readonly<Record<string, (draft: Draft, value: unknown) => void>> = {
    // llama-bench sizes its context to each test; the memory check probes the plan's own context
    contextSize: (d, v) => { d.contextSize = positiveInteger(v, "settings.contextSize"); },
    batchSize: (d, v) => { d.ubatch = positiveInteger(v, "settings.batchSize"); },
    threads: (d, v) => { d.threads = positiveInteger(v, "settings.threads"); },
    useMmap: (d, v) => { d.mmap = bool(v, "settings.useMmap"); },
    // the configuration knobs (electron/contract/settings.ts ContextKnobs)
    useGpu: (d, v) => { d.hideGpu = !bool(v, "settings.useGpu"); },
    opOffload: (d, v) => { d.opOffload = bool(v, "settings.opOffload"); },
    kvOffload: (d, v) => { d.kvOffload = bool(v, "settings.kvOffload"); },
    flashAttention: (d, v) => { d.flashAttention = bool(v, "settings.flashAttention"); },
    // one type for K and V, as tensorwise loads it (-ctk and -ctv)
    kvCacheType: (d, v) => { d.typeK = d.typeV = kvType(v, "settings.kvCacheType"); }
};

const KV_TYPES: readonly KvCacheType[] = ["f16", "q8_0", "q4_0", "bf16", "f32"];

function kvType(value: unknown, what: string): KvCacheType {
    if (typeof value !== "string" || !(KV_TYPES as readonly string[]).includes(value)) throw new UnknownPlanField(`${what} must be one of ${KV_TYPES.join(", ")}, got ${JSON.stringify(value)}`);
    return value as KvCacheType;
}

/** `placement` fields: the per-tensor form of gpuLayers + overrides. */
const PLACEMENT_FIELDS = new Set(["defaultBufferType", "assignments"]);

/**
 * llama-cli flags the plan's command may hold, by what they mean in a {@link RegretConfig}. Placement flags (`-m`,
 * `-ngl`, `-ot`, `--cpu-moe`, `--n-cpu-moe`, `--rpc`) are taken from the structured fields instead and only skipped
 * here; `-b` follows `-ub`. source: common/arg.cpp of the bundled llama.cpp.
 */
const CLI_FLAGS: Readonly<Record<string, {readonly args: 0 | 1; readonly check?: (config: RegretConfig, value: string) => boolean}>> = {
    "-m": {args: 1}, "-ngl": {args: 1}, "--n-gpu-layers": {args: 1}, "-ot": {args: 1}, "--override-tensor": {args: 1},
    "--cpu-moe": {args: 0}, "--n-cpu-moe": {args: 1}, "--rpc": {args: 1}, "-b": {args: 1}, "--batch-size": {args: 1},
    "-ub": {args: 1, check: (c, v) => c.ubatch === Number(v)}, "--ubatch-size": {args: 1, check: (c, v) => c.ubatch === Number(v)},
    "-t": {args: 1, check: (c, v) => c.threads === Number(v)}, "--threads": {args: 1, check: (c, v) => c.threads === Number(v)},
    "--load-mode": {args: 1, check: (c, v) => c.mmap === (v !== "none")}, "-lm": {args: 1, check: (c, v) => c.mmap === (v !== "none")},
    "--no-mmap": {args: 0, check: (c) => !c.mmap}, "--mmap": {args: 0, check: (c) => c.mmap},
    "--no-op-offload": {args: 0, check: (c) => !c.opOffload},
    "-fa": {args: 1, check: (c, v) => c.flashAttention === isOn(v)}, "--flash-attn": {args: 1, check: (c, v) => c.flashAttention === isOn(v)},
    "-ctk": {args: 1, check: (c, v) => c.typeK === v}, "--cache-type-k": {args: 1, check: (c, v) => c.typeK === v},
    "-ctv": {args: 1, check: (c, v) => c.typeV === v}, "--cache-type-v": {args: 1, check: (c, v) => c.typeV === v},
    "-nkvo": {args: 0, check: (c) => !c.kvOffload}, "--no-kv-offload": {args: 0, check: (c) => !c.kvOffload},
    "-dev": {args: 1, check: (c, v) => c.hideGpu === (v === "none")}, "--device": {args: 1, check: (c, v) => c.hideGpu === (v === "none")}
};

function isOn(value: string): boolean {
    return value === "on" || value === "1" || value === "true";
}

function positiveInteger(value: unknown, what: string): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) throw new UnknownPlanField(`${what} must be a positive integer, got ${JSON.stringify(value)}`);
    return value;
}

function bool(value: unknown, what: string): boolean {
    if (typeof value !== "boolean") throw new UnknownPlanField(`${what} must be true or false, got ${JSON.stringify(value)}`);
    return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A plan as llama-bench runs it, and the context its memory is planned at. */
export type PlanConfig = {readonly config: RegretConfig; readonly contextSize: number | null};

/**
 * Maps a parsed `tensorwise plan --json` to a {@link RegretConfig}. Throws {@link UnknownPlanField} on a field (top-level,
 * in `settings` or `placement`) or a llama.cpp flag it does not know, and when the command and the fields disagree.
 */
export function planToConfig(plan: unknown, model: {layerCount: number}): PlanConfig {
    if (!isRecord(plan)) throw new UnknownPlanField("the plan is not a JSON object");
    for (const key of Object.keys(plan))
        if (TOP_LEVEL[key] == null) throw new UnknownPlanField(`the plan has a field "${key}" that bench-regret does not map to llama-bench flags: add it to TOP_LEVEL in electron/engine/bench/regret/planConfig.ts`);
    if (plan.fits === false) throw new PlanDoesNotFit(`the plan does not fit: ${String(plan.reason ?? "no reason given")}`);
    const draft: Draft = {...RUNTIME_DEFAULTS, gpuLayers: 0, overrides: [], cpuMoeLayers: 0, ubatch: 0, threads: 0, mmap: false};
    const layers = plan.gpuLayers;
    if (layers === "max") draft.gpuLayers = model.layerCount + 1;
    else if (typeof layers === "number" && Number.isSafeInteger(layers) && layers >= 0) draft.gpuLayers = layers;
    else throw new UnknownPlanField(`gpuLayers must be a non-negative integer or "max", got ${JSON.stringify(layers)}`);
    if (!Array.isArray(plan.overrides)) throw new UnknownPlanField("overrides must be a list");
    draft.overrides = plan.overrides.map((o: unknown, i) => {
        if (!isRecord(o) || typeof o.pattern !== "string" || typeof o.bufferType !== "string")
            throw new UnknownPlanField(`overrides[${i}] must be {pattern, bufferType}`);
        const extra = Object.keys(o).filter((k) => k !== "pattern" && k !== "bufferType");
        if (extra.length > 0) throw new UnknownPlanField(`overrides[${i}] has fields bench-regret does not know: ${extra.join(", ")}`);
        return [o.pattern, cliBufferTypeName(o.bufferType)] as const;
    });
    if (!isRecord(plan.settings)) throw new UnknownPlanField("settings must be an object");
    for (const [key, value] of Object.entries(plan.settings)) {
        const apply = SETTINGS[key];
        if (apply == null) throw new UnknownPlanField(`the plan's settings.${key} (${JSON.stringify(value)}) is not mapped to a llama-bench flag: add it to SETTINGS in electron/engine/bench/regret/planConfig.ts`);
        apply(draft, value);
    }
    for (const required of ["batchSize", "threads", "useMmap"] as const)
        if (!(required in plan.settings)) throw new UnknownPlanField(`the plan's settings lack ${required}`);
    if (plan.placement != null) {
        if (!isRecord(plan.placement)) throw new UnknownPlanField("placement must be an object");
        for (const key of Object.keys(plan.placement))
            if (!PLACEMENT_FIELDS.has(key)) throw new UnknownPlanField(`the plan's placement.${key} is not known to bench-regret`);
    }
    const {contextSize, ...rest} = draft;
    const config = normaliseConfig(rest, model.layerCount);
    checkCommand(plan.llamaCppFlags, config);
    return {config, contextSize: contextSize ?? null};
}

/** Every flag of the plan's llama.cpp command is known, and the settings ones agree with the fields. */
function checkCommand(flags: unknown, config: RegretConfig): void {
    if (flags == null) return;
    if (!isRecord(flags) || !Array.isArray(flags.argv)) throw new UnknownPlanField("llamaCppFlags.argv must be a list");
    const argv = flags.argv.map(String);
    for (let i = 0; i < argv.length; i++) {
        const flag = argv[i]!;
        const known = CLI_FLAGS[flag];
        if (known == null) throw new UnknownPlanField(`the plan's llama.cpp command has ${flag}, which bench-regret does not map to llama-bench: add it to CLI_FLAGS in electron/engine/bench/regret/planConfig.ts`);
        const value = known.args === 1 ? argv[++i] : "";
        if (value === undefined) throw new UnknownPlanField(`${flag} has no value in the plan's llama.cpp command`);
        if (known.check != null && !known.check(config, value))
            throw new UnknownPlanField(`the plan's llama.cpp command says ${flag}${value === "" ? "" : ` ${value}`}, its fields say otherwise`);
    }
}

