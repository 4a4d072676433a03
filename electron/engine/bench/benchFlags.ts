/**
 * Renders a benchmarked plan as stock llama.cpp commands: `llama-cli` (via the placement module's renderers) and
 * `llama-bench` on the same cells.
 *
 * source: tools/llama-bench/llama-bench.cpp of the bundled llama.cpp — `-p`/`-n` take comma lists, `-r` repetitions,
 * `-ub`/`-b`, `-t`, `-lm none` (no mmap), `-fa 0|1`, `-o json`; `-ot` takes ONE value whose `;`-separated
 * `<pattern>=<buffer type>` pairs form one configuration (a `,` starts another configuration, so never emit one).
 */
import {cliBufferTypeName, renderLayerSplitFlags, renderOverrideFlags, shellQuote} from "../placement/llamaCppFlags.js";
import type {BenchPlan, BenchReproduction} from "../../contract/bench.js";

/** llama.cpp's default logical batch; `-b` must be raised with a larger micro-batch. source: common/common.h. */
const LLAMA_DEFAULT_BATCH = 2048;

/** What the commands need besides the plan. */
export type ReproductionOptions = {
    readonly modelPath: string;
    readonly layerCount: number | null;
    readonly prompts: readonly number[];
    readonly gens: readonly number[];
    readonly repeats: number;
    /** Defaults to `"llama-bench"`. */
    readonly benchProgram?: string;
};

/** `llama-bench` arguments for a plan on the given cells (flash attention off, as in our builds). */
export function llamaBenchArgv(plan: BenchPlan, options: ReproductionOptions): string[] {
    const argv = ["-m", options.modelPath, "-ngl", String(plan.gpuLayers === "max" ? 999 : plan.gpuLayers)];
    if (plan.overrides.length > 0) {
        for (const o of plan.overrides)
            if (o.pattern.includes(",") || o.pattern.includes(";") || o.pattern.includes("="))
                throw new Error(`override pattern ${JSON.stringify(o.pattern)} contains "," ";" or "=", which llama-bench's -ot parser splits on`);
        argv.push("-ot", plan.overrides.map((o) => `${o.pattern}=${cliBufferTypeName(o.bufferType)}`).join(";"));
    }
    if (plan.batchSize > LLAMA_DEFAULT_BATCH) argv.push("-b", String(plan.batchSize));
    argv.push("-ub", String(plan.batchSize), "-t", String(plan.threads), "-fa", "0");
    if (!plan.useMmap) argv.push("-lm", "none");
    argv.push("-p", options.prompts.join(","), "-n", options.gens.join(","), "-r", String(options.repeats), "-o", "json");
    return argv;
}

/** Both commands for a plan. */
export function reproduce(plan: BenchPlan, options: ReproductionOptions): BenchReproduction {
    const flagOptions = {modelPath: options.modelPath, ubatch: plan.batchSize, threads: plan.threads, noMmap: !plan.useMmap};
    const cli = plan.gpuLayers === "max" || plan.overrides.length > 0
        ? renderOverrideFlags(plan.overrides, {...flagOptions, gpuLayers: plan.gpuLayers === "max" ? undefined : plan.gpuLayers})
        : renderLayerSplitFlags(plan.gpuLayers, {...flagOptions, layerCount: options.layerCount ?? undefined});
    const benchArgv = llamaBenchArgv(plan, options);
    return {cli: cli.command, bench: [options.benchProgram ?? "llama-bench", ...benchArgv].map(shellQuote).join(" "), benchArgv};
}
