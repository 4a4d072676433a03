/**
 * Renders a benchmarked plan as stock llama.cpp commands: `llama-cli` and `llama-bench` on the same cells (the
 * placement flags of both come from electron/engine/placement/llamaCppFlags.ts).
 *
 * source: tools/llama-bench/llama-bench.cpp of the bundled llama.cpp — `-p`/`-n` take comma lists, `-r` repetitions,
 * `-o json`.
 */
import {renderLlamaBenchFlags, renderLlamaCppFlags, shellQuote, type LlamaCppPlan} from "../placement/llamaCppFlags.js";
import type {BenchPlan, BenchReproduction} from "../../contract/bench.js";

/** What the commands need besides the plan. */
export type ReproductionOptions = {
    readonly modelPath: string;
    readonly layerCount: number | null;
    /** Every tensor name of the model, so `--cpu-moe` / `--n-cpu-moe N` plans are written that way. Omitted: `-ot`. */
    readonly tensorNames?: readonly string[];
    readonly prompts: readonly number[];
    readonly gens: readonly number[];
    readonly repeats: number;
    /** Defaults to `"llama-bench"`. */
    readonly benchProgram?: string;
};

function asLlamaCppPlan(plan: BenchPlan): LlamaCppPlan {
    return {gpuLayers: plan.gpuLayers, overrides: plan.overrides, settings: {batchSize: plan.batchSize, threads: plan.threads, useMmap: plan.useMmap, ...plan.knobs}};
}

/** `llama-bench` arguments for a plan on the given cells. */
export function llamaBenchArgv(plan: BenchPlan, options: ReproductionOptions): string[] {
    return ["-m", options.modelPath, ...renderLlamaBenchFlags(asLlamaCppPlan(plan)),
        "-p", options.prompts.join(","), "-n", options.gens.join(","), "-r", String(options.repeats), "-o", "json"];
}

/** Both commands for a plan. */
export function reproduce(plan: BenchPlan, options: ReproductionOptions): BenchReproduction {
    const cli = renderLlamaCppFlags(asLlamaCppPlan(plan), {
        modelPath: options.modelPath, layerCount: options.layerCount ?? undefined, tensorNames: options.tensorNames
    });
    const benchArgv = llamaBenchArgv(plan, options);
    return {cli: cli.command, bench: [options.benchProgram ?? "llama-bench", ...benchArgv].map(shellQuote).join(" "), benchArgv};
}
