/**
 * Command-line flag values checked against the one bounds table (`electron/contract/limits.ts`), with messages that
 * name the flag. Every command parses its numbers here, so `--threads 0x10`, `--max-tokens " 3"` and
 * `--prompt-tokens 99999999999999` are refused the same way everywhere.
 */
import {availableParallelism} from "node:os";
import type {Budget} from "../contract/ipc.js";
import {isKvCacheType, KV_CACHE_TYPES, settingsConflict, type RuntimeSettings} from "../contract/settings.js";
import {LIMITS, parseLimitText, TEXT_LIMITS, type LimitName} from "../contract/limits.js";
import type {EngineGpu} from "../engine/native/getEngineLlama.js";
import {isSpeculativeChoice, SPECULATIVE_CHOICES, type SpeculativeRequest} from "../contract/speculative.js";
import {UsageError} from "./UsageError.js";

/** A flag's raw value as `parseArgs` returns it. */
export type FlagValue = string | boolean | undefined;

/** `--name`'s number checked against `limit`, or `undefined` when the flag is absent. */
export function flagNumber(value: FlagValue, flag: string, limit: LimitName, tighter?: {max: number; reason: string}): number | undefined {
    if (value == null)
        return undefined;
    const parsed = parseLimitText(limit, String(value), tighter);
    if (!parsed.ok)
        throw new UsageError(`--${flag}: ${parsed.message}`);
    return parsed.value;
}

/** `--threads N`: at most this machine's logical cores (more only makes ggml's spinning threads fight for them). */
export function flagThreads(value: FlagValue, flag = "threads"): number | undefined {
    const cores = availableParallelism();
    return flagNumber(value, flag, "threads", {max: cores, reason: `this machine has ${cores} logical cores`});
}

/**
 * `--profile-seconds N`: how long the machine profile may measure, as profileMachine's `timeLimitMs`. A slow device
 * (Mesa's llvmpipe) needs about a minute to time every operator at every prefill size; a profile cut short
 * extrapolates the rest, and its prompt predictions are then far off.
 */
export const PROFILE_SECONDS_OPTION = {"profile-seconds": {type: "string"}} as const;

/** The profile options of `--profile-seconds`, or none when absent. */
export function flagProfileTime(value: FlagValue): {timeLimitMs: number} | undefined {
    const seconds = flagNumber(value, "profile-seconds", "profileSeconds");
    return seconds == null ? undefined : {timeLimitMs: seconds * 1000};
}

/** A comma-separated list of numbers (`--prompts 32,64,128`), deduplicated and sorted. */
export function flagNumberList(value: FlagValue, flag: string, limit: LimitName): number[] {
    const text = String(value ?? "");
    if (text.length > TEXT_LIMITS.flagList)
        throw new UsageError(`--${flag} is too long`);
    const items = text.split(",").map((item) => item.trim()).filter((item) => item !== "");
    if (items.length < LIMITS.listLength.min || items.length > LIMITS.listLength.max)
        throw new UsageError(`--${flag} must list ${LIMITS.listLength.min} to ${LIMITS.listLength.max} values (got "${text.slice(0, 40)}")`);
    const numbers = items.map((item) => flagNumber(item, flag, limit) as number);
    return [...new Set(numbers)].sort((a, b) => a - b);
}

/** `"4096"` → 4096 MiB, `"50%"` → half of the model's weights, `"auto"` → free VRAM minus a margin. */
export function parseBudget(text: string, flag = "budget"): Budget {
    if (text === "auto")
        return {kind: "auto"};
    if (text.endsWith("%"))
        return {kind: "percent", percent: flagNumber(text.slice(0, -1), flag, "budgetPercent") as number};
    const mib = /^(.*?)(?:MiB)?$/i.exec(text)?.[1] ?? text;
    if (!/^[0-9.]+$/.test(mib))
        throw new UsageError(`--${flag} must be MiB (e.g. 4096), a share of the weights (e.g. 50%) or auto (got "${text.slice(0, 40)}")`);
    return {kind: "mib", mib: flagNumber(mib, flag, "budgetMiB") as number};
}

const GPUS: readonly EngineGpu[] = ["auto", "cpu", "cuda", "vulkan", "metal"];

export function parseGpu(value: FlagValue): EngineGpu {
    const gpu = String(value ?? "auto");
    if ((GPUS as readonly string[]).includes(gpu))
        return gpu as EngineGpu;
    throw new UsageError(`--gpu must be ${GPUS.slice(0, -1).join(", ")} or ${GPUS.at(-1)} (got "${gpu.slice(0, 40)}")`);
}

/**
 * The llama.cpp knobs a client may fix (the planner chooses those left `auto`): `--use-gpu` (off = llama.cpp's
 * `--device none`), `--op-offload`, `--kv-offload`, `--flash-attention`, each `on|off|auto`, and `--kv-cache-type`.
 */
export const KNOB_OPTIONS = {
    "use-gpu": {type: "string"}, "op-offload": {type: "string"}, "kv-offload": {type: "string"}, "flash-attention": {type: "string"},
    "kv-cache-type": {type: "string"}
} as const;

/** The usage text of {@link KNOB_OPTIONS}. */
export const KNOB_USAGE = "[--use-gpu on|off|auto] [--op-offload on|off|auto] [--kv-offload on|off|auto] [--flash-attention on|off|auto] " +
    `[--kv-cache-type ${KV_CACHE_TYPES.join("|")}]`;

function onOff(value: FlagValue, flag: string): boolean | null {
    if (value == null || value === "auto") return null;
    if (value === "on") return true;
    if (value === "off") return false;
    throw new UsageError(`--${flag} must be on, off or auto (got "${String(value).slice(0, 40)}")`);
}

/** The knobs {@link KNOB_OPTIONS} set, as settings (absent: the planner's choice, or llama.cpp's default for a manual load). */
export function flagKnobs(values: Record<string, FlagValue>): Partial<RuntimeSettings> {
    const knobs: Partial<RuntimeSettings> = {};
    const pairs = [["useGpu", "use-gpu"], ["opOffload", "op-offload"], ["kvOffload", "kv-offload"], ["flashAttention", "flash-attention"]] as const;
    for (const [key, flag] of pairs) {
        const value = onOff(values[flag], flag);
        if (value != null) knobs[key] = value;
    }
    const type = values["kv-cache-type"];
    if (type != null) {
        if (!isKvCacheType(type))
            throw new UsageError(`--kv-cache-type must be one of ${KV_CACHE_TYPES.join(", ")} (got "${String(type).slice(0, 40)}")`);
        knobs.kvCacheType = type;
    }
    const conflict = settingsConflict({kvCacheType: knobs.kvCacheType ?? "f16", flashAttention: knobs.flashAttention ?? null});
    if (conflict != null) throw new UsageError(`--kv-cache-type ${knobs.kvCacheType} with --flash-attention off: ${conflict}`);
    return knobs;
}

/** Speculative decoding's flags, as llama.cpp names them (common/arg.cpp), with `--spec` for the planner's choice. */
export const SPEC_OPTIONS = {
    spec: {type: "string"}, "model-draft": {type: "string"}, "spec-draft-n-max": {type: "string"},
    "spec-ngram-map-k-size-n": {type: "string"}, "spec-ngram-map-k-size-m": {type: "string"}
} as const;

/** The usage text of {@link SPEC_OPTIONS}. */
export const SPEC_USAGE = `[--spec ${SPECULATIVE_CHOICES.join("|")}] [--model-draft FILE] [--spec-draft-n-max N] ` +
    "[--spec-ngram-map-k-size-n N] [--spec-ngram-map-k-size-m N]";

/**
 * The speculation {@link SPEC_OPTIONS} ask for; `undefined` when none is named. `--model-draft` alone means `--spec
 * draft` (as llama.cpp's `-md` does); a flag the chosen kind does not use is refused by name.
 */
export function flagSpeculative(values: Record<string, FlagValue>): SpeculativeRequest | undefined {
    const spec = values.spec, draft = values["model-draft"];
    const nMax = flagNumber(values["spec-draft-n-max"], "spec-draft-n-max", "draftMax");
    const ngramSizeN = flagNumber(values["spec-ngram-map-k-size-n"], "spec-ngram-map-k-size-n", "ngramSize");
    const ngramSizeM = flagNumber(values["spec-ngram-map-k-size-m"], "spec-ngram-map-k-size-m", "ngramSize");
    if (spec != null && !isSpeculativeChoice(spec))
        throw new UsageError(`--spec must be one of ${SPECULATIVE_CHOICES.join(", ")} (got "${String(spec).slice(0, 40)}")`);
    if (draft != null && (typeof draft !== "string" || draft === "")) throw new UsageError("--model-draft needs the draft model's file");
    const choice = spec ?? (draft != null ? "draft" : undefined);
    if (choice == null) {
        if (nMax != null || ngramSizeN != null || ngramSizeM != null)
            throw new UsageError("--spec-draft-n-max and --spec-ngram-map-k-size-* apply to speculative decoding: add --spec (or --model-draft)");
        return undefined;
    }
    if (draft != null && choice !== "draft" && choice !== "auto")
        throw new UsageError(`--model-draft applies to --spec draft or auto, not --spec ${choice}`);
    if (choice === "draft" && draft == null) throw new UsageError("--spec draft needs the draft model (--model-draft FILE)");
    if ((ngramSizeN != null || ngramSizeM != null) && choice !== "ngram" && choice !== "auto")
        throw new UsageError(`--spec-ngram-map-k-size-* apply to --spec ngram or auto, not --spec ${choice}`);
    if (choice === "off" && nMax != null) throw new UsageError("--spec-draft-n-max does not apply to --spec off");
    return {choice, ...(typeof draft === "string" ? {draftPath: draft} : {}), ...(nMax != null ? {nMax} : {}),
        ...(ngramSizeN != null ? {ngramSizeN} : {}), ...(ngramSizeM != null ? {ngramSizeM} : {})};
}
