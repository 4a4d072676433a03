/**
 * One configuration a user could type into stock `llama-bench`, as the planner-regret benchmark enumerates and runs it
 * (bench/drivers/bench-regret.mjs): the placement (`-dev none`, `-ngl`, `-ot`, `-ncmoe`) and the settings that change speed
 * (`-ub`/`-b`, `--no-op-offload`, `-ctk`/`-ctv`, `-fa`, `-nkvo`, `-t`, `-lm`).
 *
 * source: tools/llama-bench/llama-bench.cpp of the bundled llama.cpp — print_usage and parse_cmd_params (`-ot` takes
 * `;`-separated `<pattern>=<buffer type>` pairs in one configuration, a `,` starts another; `-lm none|mmap`;
 * `-dev none` loads no GPU device at all).
 */
import {LLAMA_DEFAULT_BATCH} from "../../placement/llamaCppFlags.js";

/** KV cache element types the benchmark crosses (`-ctk` / `-ctv`). */
export type KvCacheType = "f16" | "q8_0" | "q4_0" | "bf16" | "f32";

/** What stock llama-bench is told; every field is one of its flags. */
export type RegretConfig = {
    /** `-dev none`: no GPU device is loaded (what `--gpu cpu` does in tensorwise). `false`: llama.cpp's default devices. */
    readonly hideGpu: boolean;
    /** `-ngl`; {@link ALL_GPU_LAYERS} is every layer and the output. */
    readonly gpuLayers: number;
    /** `-ot` pairs (pattern, buffer type as `-ot` accepts it), in order; empty: none. */
    readonly overrides: readonly (readonly [pattern: string, bufferType: string])[];
    /** `-ncmoe N`: the expert weights of layers 0 … N−1 stay in host memory. 0: none. */
    readonly cpuMoeLayers: number;
    /** `-ub` (and `-b` when above llama.cpp's default logical batch). */
    readonly ubatch: number;
    /** `false` = `-nopo 1` (llama.cpp's `--no-op-offload`). */
    readonly opOffload: boolean;
    readonly typeK: KvCacheType;
    readonly typeV: KvCacheType;
    readonly flashAttention: boolean;
    /** `false` = `-nkvo 1`: the KV cache stays in host memory. */
    readonly kvOffload: boolean;
    readonly threads: number;
    /** `-lm mmap` when `true`, `-lm none` (weights read into memory; pinned host buffers with a GPU) when `false`. */
    readonly mmap: boolean;
};

/** llama-bench's "every layer" for `-ngl` (it clamps). Configurations are normalised to it, so keys compare. */
export const ALL_GPU_LAYERS = 999;

/** One benchmark cell: TTFT of a prompt of `tokens` (llama-bench `-p`) or TPOT over `tokens` generated (`-n`). */
export type RegretCell = {readonly kind: "ttft" | "tpot"; readonly tokens: number};

/** `ttft@512`, `tpot@32`. */
export function cellLabel(cell: RegretCell): string {
    return `${cell.kind}@${cell.tokens}`;
}

/** The config with `gpuLayers` ≥ the model's layers + output clamped to {@link ALL_GPU_LAYERS}, and `-ngl 0` under `-dev none`. */
export function normaliseConfig(config: RegretConfig, layerCount: number): RegretConfig {
    if (config.hideGpu) return {...config, gpuLayers: 0, overrides: [], cpuMoeLayers: 0, opOffload: true, kvOffload: true};
    return {...config, gpuLayers: config.gpuLayers > layerCount ? ALL_GPU_LAYERS : config.gpuLayers};
}

/** The placement flags (`-dev none`, `-ngl`, `-ot`, `-ncmoe`): what llama-bench loads the model with. */
export function placementFlags(config: Pick<RegretConfig, "hideGpu" | "gpuLayers" | "overrides" | "cpuMoeLayers">): string[] {
    const argv: string[] = [];
    if (config.hideGpu) argv.push("-dev", "none");
    argv.push("-ngl", String(config.gpuLayers));
    if (config.overrides.length > 0) {
        for (const [pattern, bufferType] of config.overrides)
            if (/[,;=]/.test(pattern) || /[,;=]/.test(bufferType) || bufferType === "")
                throw new Error(`override ${JSON.stringify(pattern)}=${JSON.stringify(bufferType)} cannot be passed to llama-bench's -ot (it splits on "," ";" and "=")`);
        argv.push("-ot", config.overrides.map(([pattern, bufferType]) => `${pattern}=${bufferType}`).join(";"));
    }
    if (config.cpuMoeLayers > 0) argv.push("-ncmoe", String(config.cpuMoeLayers));
    return argv;
}

/** The placement and settings flags (no `-m`, `-p`, `-n`, `-r`, `-o`), in a fixed order. */
export function configFlags(config: RegretConfig): string[] {
    const argv = placementFlags(config);
    if (config.ubatch > LLAMA_DEFAULT_BATCH) argv.push("-b", String(config.ubatch));
    argv.push("-ub", String(config.ubatch));
    if (!config.opOffload) argv.push("-nopo", "1");
    argv.push("-ctk", config.typeK, "-ctv", config.typeV, "-fa", config.flashAttention ? "1" : "0");
    if (!config.kvOffload) argv.push("-nkvo", "1");
    argv.push("-t", String(config.threads), "-lm", config.mmap ? "mmap" : "none");
    return argv;
}

/** A stable key: two configurations with the same key run the same llama-bench command. */
export function configKey(config: RegretConfig): string {
    return configFlags(config).join(" ");
}

/** The whole llama-bench command line for one cell: `-m`, the flags, `-p`/`-n`, `-r`, `-o json`. */
export function configArgv(config: RegretConfig, options: {modelPath: string; cell: RegretCell; repeats: number; progress?: boolean}): string[] {
    const {cell} = options;
    const work = cell.kind === "ttft" ? ["-p", String(cell.tokens), "-n", "0"] : ["-p", "0", "-n", String(cell.tokens)];
    return ["-m", options.modelPath, ...configFlags(config), ...work, "-r", String(options.repeats), "-o", "json",
        ...(options.progress === false ? [] : ["--progress"])];
}

/** Whether a GPU device holds anything (weights, KV or compute buffers) under this configuration. */
export function usesGpu(config: RegretConfig): boolean {
    return !config.hideGpu;
}

/**
 * Whether some weight matrices stay in host memory: with a GPU in use, those are what op offload copies over for
 * every prompt micro-batch of ≥ 32 tokens, and what mmap vs pinned memory changes.
 */
export function keepsWeightsOnHost(config: RegretConfig): boolean {
    return config.hideGpu || config.gpuLayers < ALL_GPU_LAYERS || config.overrides.length > 0 || config.cpuMoeLayers > 0;
}
