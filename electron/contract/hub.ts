/** Getting a model from a model hub (Hugging Face, or `HF_ENDPOINT`): search results and quants with their plans. */

/** A repository a search found. */
export type HubSearchResult = {id: string; downloads: number | null; likes: number | null};

import type {PredictionRangeView} from "./predictionRange.js";

/** Where a plan puts the weights. */
export type HubQuantPlacement = "GPU" | "mixed" | "CPU";

/** A quant's plan on this machine for the typical chat request, made from its header before any download. */
export type HubQuantPlan = {
    placement: HubQuantPlacement;
    ttftMs: number;
    tpotMs: number;
    tokensPerSecond: number;
    /** TTFT plus the rest of the reply's tokens. */
    requestMs: number;
    /** Weights, KV cache and compute buffers on the GPU. */
    gpuBytes: number;
    /** Weights, KV cache and compute buffers in system RAM. */
    hostBytes: number;
    /** Whether the RAM part fits the memory free now. */
    fitsRam: boolean;
    gpuName: string | null;
    profileReused: boolean;
    /** Where TTFT and TPOT are expected, from this machine's measured prediction errors (not yet this model's: it is not here). */
    ranges?: {ttft: PredictionRangeView; tpot: PredictionRangeView};
};

/** One model (quant) of a repository. */
export type HubQuant = {
    name: string;
    /** Its files, part 1 first. */
    files: string[];
    bytes: number;
    /** `null` with `notPlanned` saying why (no profile cached: `needsProfile`). */
    plan: HubQuantPlan | null;
    notPlanned: string | null;
    needsProfile: boolean;
};

/** A repository's quants, fastest that fits first, planned for `workload`. */
export type HubQuantList = {
    repo: string;
    revision: string;
    quants: HubQuant[];
    workload: {promptTokens: number; genTokens: number};
};

/** Longest search text sent to the hub. */
export const HUB_QUERY_MAX_CHARS = 200;
