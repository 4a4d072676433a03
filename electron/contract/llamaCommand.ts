/**
 * A user's llama.cpp command line priced beside the plan (electron/engine/llamaArgs/commandPlan.ts), as the app asks
 * for it and sees it. A leaf: imports nothing.
 */

/** The longest command line the app takes (a forum recipe with dozens of `-ot` is a few KB). */
export const LLAMA_COMMAND_MAX_CHARS = 16_384;

/** What to load once both are priced: the planner's choice or the user's command, exactly. */
export const LLAMA_COMMAND_LOADS = ["plan", "command"] as const;
export type LlamaCommandLoad = (typeof LLAMA_COMMAND_LOADS)[number];

/** Asked with an auto-offload: price `line` beside the plan, and load `load`. */
export type LlamaCommandRequest = {line: string; load: LlamaCommandLoad};

/** A flag read but not priced, or refused, with why. */
export type CommandFlagNote = {flag: string; why: string};

/** The command priced beside the plan, for the Offload screen. */
export type CommandComparisonView = {
    line: string;
    program: string;
    /** What was loaded. */
    loaded: LlamaCommandLoad;
    notPriced: CommandFlagNote[];
    /** Non-empty: the command could not be priced here, and `priced` is `null`. */
    refused: CommandFlagNote[];
    priced: null | {
        fits: boolean;
        reason: string | null;
        gpuLayers: number;
        overrideCount: number;
        ttftMs: number;
        tpotMs: number;
        vramBytes: number;
        notes: string[];
    };
    plan: {ttftMs: number; tpotMs: number; vramBytes: number};
    /** Bytes over the GPU's free memory by llama.cpp's simulation; 0 when it fits. */
    overshootBytes: number;
    /** Tensors placed otherwise, grouped; `requestMsDelta` what the command's choice for the group costs a request (`null`: not priced). */
    differences: {what: string; bytes: number; command: "GPU" | "CPU"; plan: "GPU" | "CPU"; requestMsDelta: number | null}[];
    knobDifferences: string[];
};
