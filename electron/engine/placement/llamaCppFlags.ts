/**
 * Renders a plan as llama.cpp command-line flags, so a user can reproduce it with stock llama.cpp tools.
 *
 * source: common/arg.cpp of the bundled llama.cpp — `-ot/--override-tensor <pattern>=<buffer type>,...`
 * (`parse_tensor_buffer_overrides`: splits the value on every `,`, then each pair at its first `=`, and accepts only
 * the buffer types of devices, `ggml_backend_dev_buffer_type`, not host buffer types); `-ngl N`; `-ub N`; `-b N`;
 * `-t N`; `-lm/--load-mode none` (this llama.cpp has no `--no-mmap`; older builds spell it that way); `-dev none`;
 * `--no-op-offload`; `-nkvo`; `-fa on|off`; `-ctk`/`-ctv`.
 */
import { moeFlagsFor } from "./moeFlags.js";
import {isPinnedHostBufferType} from "../../contract/memory.js";
import type {ContextKnobs, ResolvedSettings} from "../../contract/settings.js";
import type { TensorBufferOverride } from "./Placement.js";

/** llama.cpp's default logical batch (`n_batch`); the micro-batch is clamped to it. source: common/common.h. */
export const LLAMA_DEFAULT_BATCH = 2048;

/** `-ngl` value that offloads every layer of any model (llama.cpp clamps it). */
export const ALL_LAYERS = 999;

/** Options shared by the renderers. */
export interface LlamaCppFlagsOptions {
    /** Program for the one-line command. Defaults to `"llama-cli"`. */
    readonly program?: string;
    /** Model path, rendered as `-m <path>` first. Omitted: no `-m`. */
    readonly modelPath?: string;
    /** Micro-batch (`-ub`). When above llama.cpp's default batch (2048), `-b` is raised to match. Omitted: no flag. */
    readonly ubatch?: number;
    /** CPU threads (`-t`). Omitted: no flag. */
    readonly threads?: number;
    /** Context size (`-c`; llama.cpp's own default is the model's trained context). Omitted: no flag. */
    readonly contextSize?: number;
    /**
     * Load without mmap, so CPU-side weights go to the GPU's pinned host buffer (needed for fast mixed placements).
     * Defaults to `true` when the plan keeps any weight off the GPU.
     */
    readonly noMmap?: boolean;
    /** How to spell "no mmap": `"load-mode"` (`--load-mode none`, the bundled llama.cpp) or `"no-mmap"` (older builds). Defaults to `"load-mode"`. */
    readonly mmapFlagStyle?: "load-mode" | "no-mmap";
    /** The context knobs that are not llama.cpp's defaults get their flags. Omitted: none. */
    readonly knobs?: ContextKnobs;
}


/**
 * llama-cli flags for the knobs: `-dev none` without the GPU, `--no-op-offload`, `-nkvo`, `-fa on` and the KV cache
 * types. Flash attention is written either way (llama.cpp's own default is `auto`, tensorwise's is off).
 */
export function knobFlags(knobs: ContextKnobs): string[] {
    const args: string[] = [];
    if (!knobs.useGpu) args.push("-dev", "none");
    if (knobs.useGpu && !knobs.opOffload) args.push("--no-op-offload");
    if (knobs.useGpu && !knobs.kvOffload) args.push("-nkvo");
    args.push("-fa", knobs.flashAttention ? "on" : "off");
    if (knobs.kvCacheType !== "f16") args.push("-ctk", knobs.kvCacheType, "-ctv", knobs.kvCacheType);
    return args;
}

/** A rendered llama.cpp invocation. */
export interface LlamaCppCommand {
    /** Arguments after the program name, unquoted (for `spawn`). */
    readonly argv: readonly string[];
    /** The program and arguments as one POSIX-shell-quoted line. */
    readonly command: string;
    /** Things the user should know (renamed buffer types, …). */
    readonly notes: readonly string[];
}

const SAFE_SHELL_WORD = /^[A-Za-z0-9_@%+:,./-]+$/;

/** Quotes one argument for a POSIX shell (single quotes; `'` becomes `'\''`); leaves plain words alone. */
export function shellQuote(arg: string): string {
    return SAFE_SHELL_WORD.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

/**
 * The name llama.cpp's `-ot` accepts for a buffer type. Host buffer types (`CUDA_Host`, `Vulkan_Host`) are not
 * accepted there; `CPU` is, and with mmap off llama.cpp puts CPU-overridden weights in the first GPU's host buffer
 * (source: `make_cpu_buft_list` in src/llama-model.cpp), which is what a host buffer type means in a plan.
 */
export function cliBufferTypeName(bufferType: string): string {
    return isPinnedHostBufferType(bufferType) ? "CPU" : bufferType;
}

function positiveInteger(value: number | undefined, what: string): number | undefined {
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
        throw new RangeError(`${what} must be a positive integer, got ${value}`);
    }
    return value;
}

function commonFlags(options: LlamaCppFlagsOptions, offloadsPartly: boolean): string[] {
    const ubatch = positiveInteger(options.ubatch, "ubatch");
    const threads = positiveInteger(options.threads, "threads");
    const args: string[] = [];
    if (ubatch !== undefined) {
        if (ubatch > LLAMA_DEFAULT_BATCH) args.push("-b", String(ubatch));
        args.push("-ub", String(ubatch));
    }
    if (threads !== undefined) args.push("-t", String(threads));
    const contextSize = positiveInteger(options.contextSize, "contextSize");
    if (contextSize !== undefined) args.push("-c", String(contextSize));
    if (options.noMmap ?? offloadsPartly) {
        args.push(...((options.mmapFlagStyle ?? "load-mode") === "load-mode" ? ["--load-mode", "none"] : ["--no-mmap"]));
    }
    if (options.knobs != null) args.push(...knobFlags(options.knobs));
    return args;
}

function finish(options: LlamaCppFlagsOptions, args: string[], notes: string[]): LlamaCppCommand {
    const argv = [...(options.modelPath !== undefined ? ["-m", options.modelPath] : []), ...args];
    const command = [options.program ?? "llama-cli", ...argv].map(shellQuote).join(" ");
    return { argv, command, notes };
}

/**
 * Flags for a per-tensor plan: `-ngl 999` (every layer offloaded) and one `-ot '<pattern>=<buffer type>'` per
 * override, in order — or, given the model's tensor names, `--cpu-moe` / `--n-cpu-moe N` where the overrides move
 * exactly what that flag moves (moeFlags.ts) — then micro-batch, threads and mmap flags. Throws if a pattern or buffer type would not
 * survive llama.cpp's `-ot` parser (a `,` anywhere, a `=` in the pattern).
 */
export function renderOverrideFlags(overrides: readonly TensorBufferOverride[], options: LlamaCppFlagsOptions & {
    /** `-ngl` to pair with the overrides (llama.cpp's own fitting returns both). Defaults to every layer. */
    readonly gpuLayers?: number;
    /** Every tensor name of the model, to spot plans that `--cpu-moe` / `--n-cpu-moe N` express exactly. Omitted: always `-ot`. */
    readonly tensorNames?: readonly string[];
} = {}): LlamaCppCommand {
    const notes: string[] = [];
    const args = ["-ngl", String(options.gpuLayers ?? ALL_LAYERS)];
    const moe = options.gpuLayers === undefined && options.tensorNames !== undefined ? moeFlagsFor(overrides, options.tensorNames) : null;
    if (moe !== null) return finish(options, [...args, ...moe, ...commonFlags(options, true)], notes);
    overrides.forEach(({ pattern, bufferType }, i) => {
        if (pattern.includes(",") || pattern.includes("=")) {
            throw new Error(`override ${i}: pattern ${JSON.stringify(pattern)} contains "," or "=", which llama.cpp's -ot parser splits on; write them as \\x2C / \\x3D`);
        }
        if (bufferType.includes(",") || bufferType === "") {
            throw new Error(`override ${i}: buffer type ${JSON.stringify(bufferType)} cannot be passed to -ot`);
        }
        const name = cliBufferTypeName(bufferType);
        if (name !== bufferType && !notes.some((n) => n.startsWith(`${bufferType} `))) {
            notes.push(`${bufferType} is written as CPU: -ot accepts device buffer types only, and with mmap off llama.cpp puts CPU weights in the GPU's pinned host buffer`);
        }
        args.push("-ot", `${pattern}=${name}`);
    });
    return finish(options, [...args, ...commonFlags(options, overrides.length > 0)], notes);
}

/** Options for {@link renderLayerSplitFlags}. */
export interface LayerSplitFlagsOptions extends LlamaCppFlagsOptions {
    /** The model's repeating-layer count; `gpuLayers` ≤ it means the output layer stays on the CPU. Omitted: treated as partial. */
    readonly layerCount?: number;
}

/**
 * Flags for a whole-layer plan: `-ngl N`, then micro-batch, threads and mmap flags. llama.cpp offloads the last N
 * layers counting the output layer as the last one, i.e. N − 1 repeating layers plus output (source: `i_gpu_start`
 * in `llama_model::load_tensors`, src/llama-model.cpp).
 */
export function renderLayerSplitFlags(gpuLayers: number, options: LayerSplitFlagsOptions = {}): LlamaCppCommand {
    if (!Number.isSafeInteger(gpuLayers) || gpuLayers < 0) throw new RangeError(`gpuLayers must be a non-negative integer, got ${gpuLayers}`);
    const layerCount = positiveInteger(options.layerCount, "layerCount");
    const partial = layerCount === undefined || gpuLayers <= layerCount;
    return finish(options, ["-ngl", String(gpuLayers), ...commonFlags(options, partial)], []);
}

/** A plan as llama.cpp loads it: layers, overrides and the settings that change what runs where. */
export interface LlamaCppPlan {
    /** llama.cpp `-ngl`: `"max"` = every layer and the output on the GPU. */
    readonly gpuLayers: number | "max";
    readonly overrides: readonly TensorBufferOverride[];
    readonly settings: Pick<ResolvedSettings, "batchSize" | "threads" | "useMmap"> & Partial<ContextKnobs & Pick<ResolvedSettings, "contextSize">>;
}

/** The plan's knobs, or `undefined` when it carries none (a plan from before they existed: llama.cpp's defaults). */
function knobsOf(settings: LlamaCppPlan["settings"]): ContextKnobs | undefined {
    const {useGpu, opOffload, kvOffload, flashAttention, kvCacheType} = settings;
    if (useGpu == null || opOffload == null || kvOffload == null || flashAttention == null || kvCacheType == null) return undefined;
    return {useGpu, opOffload, kvOffload, flashAttention, kvCacheType};
}

/** What {@link renderLlamaCppFlags} needs besides the plan. */
export interface PlanFlagsOptions extends Pick<LlamaCppFlagsOptions, "program" | "modelPath" | "mmapFlagStyle"> {
    /** The model's repeating-layer count (see {@link LayerSplitFlagsOptions.layerCount}). */
    readonly layerCount?: number;
    /** Every tensor name of the model, so a plan `--cpu-moe` / `--n-cpu-moe N` expresses exactly is written that way. */
    readonly tensorNames?: readonly string[];
    /** rpc-servers (`host:port`) the plan puts tensors on: llama.cpp's `--rpc` (their devices exist only with it). */
    readonly rpcServers?: readonly string[];
}

/**
 * The llama.cpp command for a plan — the one place the flags are chosen: per-tensor overrides (or every layer
 * offloaded) render as {@link renderOverrideFlags}, a plain layer split as {@link renderLayerSplitFlags}, with the
 * plan's own micro-batch, threads and mmap choice.
 */
export function renderLlamaCppFlags(plan: LlamaCppPlan, options: PlanFlagsOptions = {}): LlamaCppCommand {
    const {layerCount, tensorNames, rpcServers, ...rest} = options;
    const knobs = knobsOf(plan.settings);
    const flagOptions = {...rest, ubatch: plan.settings.batchSize, threads: plan.settings.threads, noMmap: !plan.settings.useMmap,
        ...(plan.settings.contextSize != null ? {contextSize: plan.settings.contextSize} : {}), ...(knobs != null ? {knobs} : {})};
    const command = plan.gpuLayers === "max" || plan.overrides.length > 0
        ? renderOverrideFlags(plan.overrides, {...flagOptions, gpuLayers: plan.gpuLayers === "max" ? undefined : plan.gpuLayers, tensorNames})
        : renderLayerSplitFlags(plan.gpuLayers, {...flagOptions, layerCount});
    if (rpcServers == null || rpcServers.length === 0)
        return command;
    const rpc = ["--rpc", rpcServers.join(",")];
    return {...command, argv: [...command.argv, ...rpc], command: `${command.command} ${rpc.join(" ")}`};
}

/**
 * The same plan as stock llama-bench loads it (the placement part of its arguments): `-ngl`, ONE `-ot` value whose
 * `;`-separated `<pattern>=<buffer type>` pairs form one configuration (a `,` would start another, so none is ever
 * emitted), `-b`/`-ub`, `-t`, `-fa 0|1`, `-lm none` without mmap, and the knobs: `-dev none`, `-nopo 1`, `-nkvo 1`,
 * `-ctk`/`-ctv`. source: tools/llama-bench/llama-bench.cpp of the bundled llama.cpp.
 */
export function renderLlamaBenchFlags(plan: LlamaCppPlan): string[] {
    const {batchSize, threads, useMmap} = plan.settings;
    const knobs = knobsOf(plan.settings);
    const argv = ["-ngl", String(plan.gpuLayers === "max" ? ALL_LAYERS : plan.gpuLayers)];
    if (plan.overrides.length > 0) {
        for (const o of plan.overrides)
            if (o.pattern.includes(",") || o.pattern.includes(";") || o.pattern.includes("="))
                throw new Error(`override pattern ${JSON.stringify(o.pattern)} contains "," ";" or "=", which llama-bench's -ot parser splits on`);
        argv.push("-ot", plan.overrides.map((o) => `${o.pattern}=${cliBufferTypeName(o.bufferType)}`).join(";"));
    }
    if (batchSize > LLAMA_DEFAULT_BATCH) argv.push("-b", String(batchSize));
    argv.push("-ub", String(batchSize), "-t", String(threads), "-fa", knobs?.flashAttention === true ? "1" : "0");
    if (!useMmap) argv.push("-lm", "none");
    if (knobs != null) {
        if (!knobs.useGpu) argv.push("-dev", "none");
        if (knobs.useGpu && !knobs.opOffload) argv.push("-nopo", "1");
        if (knobs.useGpu && !knobs.kvOffload) argv.push("-nkvo", "1");
        if (knobs.kvCacheType !== "f16") argv.push("-ctk", knobs.kvCacheType, "-ctv", knobs.kvCacheType);
    }
    return argv;
}
