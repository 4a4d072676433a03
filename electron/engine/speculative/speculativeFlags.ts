/**
 * A speculation as llama.cpp's own command line asks for it (common/arg.cpp of the bundled llama.cpp): `--spec-type`
 * with the speculator's name, `--spec-draft-n-max`, a draft model's `--spec-draft-model` and `--spec-draft-ngl`, and
 * n-gram lookup's sizes. What `llama-server` needs to run the same speculation as tensorwise. A speculation's own
 * overrides (an MTP block's) go before the plan's, where the first match wins: {@link withSpeculativeOverrides}.
 */
import {LLAMA_SPECULATIVE_TYPE} from "../../contract/speculative.js";
import type {SpeculativeLoad} from "../runtime/PlacedModel.js";
import {ALL_LAYERS, shellQuote} from "../placement/llamaCppFlags.js";

/** The flags' words. */
export function speculativeArgv(load: SpeculativeLoad): string[] {
    const argv = ["--spec-type", LLAMA_SPECULATIVE_TYPE[load.kind]];
    if (load.nMax != null) argv.push("--spec-draft-n-max", String(load.nMax));
    if (load.nMin != null && load.nMin > 0) argv.push("--spec-draft-n-min", String(load.nMin));
    if (load.draft != null) {
        argv.push("--spec-draft-model", load.draft.modelPath);
        argv.push("--spec-draft-ngl", load.draft.gpuLayers === "max" ? String(ALL_LAYERS) : String(load.draft.gpuLayers ?? 0));
    }
    if (load.ngramSizeN != null) argv.push("--spec-ngram-map-k-size-n", String(load.ngramSizeN));
    if (load.ngramSizeM != null) argv.push("--spec-ngram-map-k-size-m", String(load.ngramSizeM));
    return argv;
}

/** The flags as one shell-quoted string. */
export function speculativeFlags(load: SpeculativeLoad): string {
    return speculativeArgv(load).map(shellQuote).join(" ");
}

/** `plan` with the speculation's own overrides first (first match wins, in llama.cpp as in PlacedModel.load). */
export function withSpeculativeOverrides<P extends {readonly overrides: readonly {pattern: string; bufferType: string}[]}>(plan: P, load: SpeculativeLoad | null | undefined): P {
    const own = load?.overrides ?? [];
    return own.length === 0 ? plan : {...plan, overrides: [...own, ...plan.overrides]};
}
