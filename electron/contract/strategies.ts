/**
 * The placement strategies, as runtime values: the one list the CLI, the host's request checks, the planner and the
 * UI derive their names and types from. A leaf: imports nothing.
 */

/** Strategies the planner can run: llama.cpp's CPU-only and layer split, llama.cpp's own fitting, its hand-tuned
 * mixture-of-experts flags (`--cpu-moe`, `--n-cpu-moe N`), the paper's Algorithm 1 ("OATO: operator-aware tensor
 * offloading"), and ours. */
export const STRATEGY_NAMES = ["cpu", "layers", "fit", "cpu-moe", "n-cpu-moe", "oato", "optimal"] as const;

/** Strategies that only mean something for a mixture-of-experts model (they move expert weights). */
export const MOE_STRATEGY_NAMES: readonly StrategyName[] = ["cpu-moe", "n-cpu-moe"];

export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** What a loaded model's placement came from: a strategy, a placement file the user wrote, or their llama.cpp command. */
export const PLACEMENT_STRATEGIES = [...STRATEGY_NAMES, "manual", "command"] as const;

export type PlacementStrategyName = (typeof PLACEMENT_STRATEGIES)[number];

/**
 * Plans over several devices (the CPU, local GPUs, rpc-servers' devices): the K-device MILP (`optimal`) and its two
 * baselines, llama.cpp's layer split over every device by free memory (`layers-split`: `-ngl N`, `-ts` unset) and the
 * best plan on the host and one local GPU (`single-gpu`).
 */
export const DEVICE_PLAN_KINDS = ["optimal", "layers-split", "single-gpu"] as const;

export type DevicePlanKind = (typeof DEVICE_PLAN_KINDS)[number];

export function isStrategyName(value: unknown): value is StrategyName {
    return typeof value === "string" && (STRATEGY_NAMES as readonly string[]).includes(value);
}

export function isPlacementStrategy(value: unknown): value is PlacementStrategyName {
    return typeof value === "string" && (PLACEMENT_STRATEGIES as readonly string[]).includes(value);
}
