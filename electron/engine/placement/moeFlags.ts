/**
 * llama.cpp's own flags for the two expert placements users tune by hand, where a plan is exactly one of them:
 * `--cpu-moe` (every expert weight in host memory) and `--n-cpu-moe N` (the expert weights of layers 0 … N−1).
 *
 * source: common/common.h of the bundled llama.cpp — LLM_FFN_EXPS_REGEX, llm_ffn_block_regex,
 * llm_ffn_exps_cpu_override and llm_add_n_cpu_ffn_overrides; `--cpu-moe` / `--n-cpu-moe` in common/arg.cpp.
 */
import {isHostBufferType} from "../../contract/memory.js";
import type {TensorBufferOverride} from "./Placement.js";

/** source: LLM_FFN_EXPS_REGEX, common/common.h. */
export const LLM_FFN_EXPS_REGEX = "\\.ffn_(up|down|gate|gate_up)_(ch|)exps";

/** The override `--cpu-moe` adds: every expert weight to the CPU (source: llm_ffn_exps_cpu_override). */
export function cpuMoeOverrides(): TensorBufferOverride[] {
    return [{pattern: LLM_FFN_EXPS_REGEX, bufferType: "CPU"}];
}

/** The overrides `--n-cpu-moe n` adds, one a layer (source: llm_add_n_cpu_ffn_overrides, `blk\.%d` + the regex). */
export function nCpuMoeOverrides(n: number): TensorBufferOverride[] {
    return Array.from({length: n}, (_, i) => ({pattern: `blk\\.${i}${LLM_FFN_EXPS_REGEX}`, bufferType: "CPU"}));
}


/** Tensors the overrides move to host memory, resolved as llama.cpp does (std::regex_search, first match wins). */
function hostSet(overrides: readonly TensorBufferOverride[], tensorNames: readonly string[]): Set<string> {
    const compiled = overrides.map((o) => ({re: new RegExp(o.pattern), host: isHostBufferType(o.bufferType)}));
    return new Set(tensorNames.filter((name) => compiled.find((o) => o.re.test(name))?.host === true));
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
    return a.size === b.size && [...a].every((x) => b.has(x));
}

/**
 * `["--cpu-moe"]` or `["--n-cpu-moe", "N"]` when the overrides (on top of every layer offloaded) move exactly the
 * tensors one of those flags moves and no others; `null` otherwise, and for a plan moving no expert weight.
 */
export function moeFlagsFor(overrides: readonly TensorBufferOverride[], tensorNames: readonly string[]): string[] | null {
    if (overrides.some((o) => !isHostBufferType(o.bufferType))) return null;
    const planned = hostSet(overrides, tensorNames);
    if (planned.size === 0) return null;
    if (sameSet(planned, hostSet(cpuMoeOverrides(), tensorNames))) return ["--cpu-moe"];
    const layers = [...planned].map((name) => Number(/^blk\.(\d+)\./.exec(name)?.[1] ?? NaN));
    if (layers.some((layer) => !Number.isSafeInteger(layer))) return null;
    const n = Math.max(...layers) + 1;
    return sameSet(planned, hostSet(nCpuMoeOverrides(n), tensorNames)) ? ["--n-cpu-moe", String(n)] : null;
}
