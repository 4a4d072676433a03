/**
 * The architecture corpus in CI (the whole corpus is `node scripts/check/arch-corpus.mjs`): llama.cpp's own
 * test-llama-archs writes a representative set — MLA with shared experts (deepseek2), SSM/attention hybrid (jamba),
 * MoE with a gated shared expert (qwen2moe), gemma3, phi3, gpt-oss and gpt-oss quantized to MXFP4 by llama-quantize —
 * and each model must do what a user notices, through the built CLI: inspect, plan, load,
 * and reply with exactly stock llama.cpp's greedy tokens on the CPU and on a forced mixed placement over Mesa's
 * llvmpipe, with the same bytes in the same buffer types. Needs g++, the built CLI and a Vulkan device; skipped with
 * the reason where one is missing, a failure in CI (requiredOrSkip.ts).
 */
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {probeEngine} from "../probeEngine.js";
import {requiredOrSkip} from "../requiredOrSkip.js";
import {ensureCorpusTool} from "./buildCorpusTools.js";
import {checkCorpusModel, type CorpusRunOptions} from "./checkCorpusModel.js";
import {formatModelLine} from "./corpusReport.js";
import {generateArchModels, quantizeModel, type CorpusQuant} from "./generateArchModels.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const cli = path.join(root, "bin", "tensorwise.mjs");
const built = path.join(root, "dist", "electron", "cli", "main.js");

const probe = await probeEngine("vulkan");
await probe.engine?.llama.dispose();
const compiler = spawnSync(process.env.CXX ?? "g++", ["--version"]);
const skip = probe.reason ?? requiredOrSkip("the architecture corpus",
    compiler.status !== 0 ? `no C++ compiler (${process.env.CXX ?? "g++"}) to build test-llama-archs` :
        fs.existsSync(built) ? null : `the CLI is not built (${built}); run \`npm run build\``);
if (skip != null)
    console.warn(`[skip] the architecture corpus: ${skip}`);

/**
 * test-llama-archs file → the quantized variants checked besides the file as written. Each new quant type costs
 * llvmpipe its shader pipelines on a cold Mesa cache (30–50 s on 2 cores), so CI checks MXFP4 on gpt-oss only; the
 * whole corpus script does Q8_0 and Q4_K_M everywhere. deepseek2 as Q8_0 is here because llama.cpp aborts on it
 * without a GPU on CPUs whose repack buffer takes its MLA weights (AMX Xeons): the plan must still be made, and keep
 * the GPU (native/src/TensorwiseSimulate.cpp runs that simulation in a child process).
 */
const REPRESENTATIVE: Readonly<Record<string, readonly CorpusQuant[]>> = {
    "deepseek2-moe.gguf": ["q8_0"],
    "jamba-dense.gguf": [],
    "qwen2moe-moe.gguf": [],
    "gemma3-dense.gguf": [],
    "phi3-dense.gguf": [],
    "gpt-oss-moe.gguf": ["mxfp4"]
};
const ARCHS = "^(deepseek2|jamba|qwen2moe|gemma3|phi3|gpt-oss)$";

describe.skipIf(skip != null)("the architecture corpus: a representative set against stock llama.cpp (CPU and Vulkan)", () => {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-arch-corpus-"));
    const models: {arch: string; variant: string; path: string}[] = [];
    let options: CorpusRunOptions;

    beforeAll(async () => {
        // seconds each on 2 cores, cached under build/native/arch-corpus; the worker answers its runner in between
        const build = async (...args: Parameters<typeof ensureCorpusTool>) => {
            await new Promise((resolve) => setImmediate(resolve));
            return ensureCorpusTool(...args);
        };
        const generator = await build("test-llama-archs", "cpu");
        const quantize = await build("llama-quantize", "cpu");
        options = {
            cli, workDir: path.join(workDir, "placements"),
            stock: {cpu: (await build("greedy-tokens", "cpu")).program, gpu: (await build("greedy-tokens", "vulkan")).program},
            gpu: {kind: "vulkan", device: "Vulkan0"}
        };
        const corpus = generateArchModels(generator.program, path.join(workDir, "models"), {seed: 42, archRegex: ARCHS});
        expect(corpus.error).toBeNull();
        expect(corpus.models.map((model) => path.basename(model.path)).sort()).toEqual(Object.keys(REPRESENTATIVE).sort());
        for (const model of corpus.models) {
            models.push({arch: model.arch, variant: "as written", path: model.path});
            for (const quant of REPRESENTATIVE[path.basename(model.path)]!) {
                const quantized = quantizeModel(quantize.program, model.path, quant, path.join(workDir, "quantized"));
                if (!quantized.ok) throw new Error(quantized.error);
                models.push({arch: model.arch, variant: quant, path: quantized.path});
            }
        }
    }, 600_000);
    afterAll(() => fs.rmSync(workDir, {recursive: true, force: true}));

    const cases = Object.entries(REPRESENTATIVE).flatMap(([file, quants]) => ["as written", ...quants].map((variant) => ({file, variant})));
    it.each(cases)("$file ($variant) inspects, plans, loads and replies with stock llama.cpp's greedy tokens on the CPU and on a mixed CPU + Vulkan placement", async ({file, variant}) => {
        const model = models.find((entry) => path.basename(entry.path).startsWith(path.basename(file, ".gguf")) && entry.variant === variant);
        expect(model, `${file} ${variant} was not generated`).toBeDefined();
        const {result} = await checkCorpusModel(model!.path, {arch: model!.arch, variant}, options);
        const line = formatModelLine(result);
        console.log(line);
        // the line names every step's reason when one fails
        // on the CPU build, stock llama.cpp aborts on MLA weights as Q8_0 where the CPU's repack buffer takes them
        // (AMX Xeons); tensorwise must then fail the same way, not differ, and still plan
        const cpuMayFailAsStock = file === "deepseek2-moe.gguf" && variant === "q8_0" && result.steps.cpu.status === "stock-fail";
        expect({inspect: result.steps.inspect.status, plan: result.steps.plan.status, cpu: result.steps.cpu.status, gpu: result.steps.gpu.status}, line)
            .toEqual({inspect: "ok", plan: "ok", cpu: cpuMayFailAsStock ? "stock-fail" : "ok", gpu: "ok"});
    }, 600_000);
});
