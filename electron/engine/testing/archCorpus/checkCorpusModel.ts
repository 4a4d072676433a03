/**
 * One corpus model through what a user runs, as a user runs it (the built CLI, one child process per command):
 * `inspect`, `plan`, then `chat` greedy on the CPU build and on a forced mixed placement over the GPU build's device
 * (corpusPlacement.ts), each reply compared, token id by token id, with stock llama.cpp's greedy tokens for the same
 * prompt on the placement tensorwise prints as its llama.cpp equivalent (stockGreedy.ts) — and the bytes llama.cpp put
 * in each buffer type (weights and KV cache) compared too, so "same placement" is checked, not assumed.
 */
import fs from "node:fs";
import path from "node:path";
import {mixedCorpusPlacement, type CorpusTensor} from "./corpusPlacement.js";
import {describeEnd, runProgram} from "./runProgram.js";
import {runStockGreedy, type StockMemory} from "./stockGreedy.js";

export type CorpusStepName = "inspect" | "plan" | "cpu" | "gpu";

/**
 * `ok`; `fail` (tensorwise failed or differs from stock); `stock-fail` (stock llama.cpp cannot run it either, so it is
 * not counted against tensorwise); `skipped` (not run here, e.g. no GPU build).
 */
export type CorpusStepStatus = "ok" | "fail" | "stock-fail" | "skipped";

export type CorpusStep = {status: CorpusStepStatus; reason: string | null; ms: number};

export type CorpusModelResult = {
    arch: string;
    /** File name of the model. */
    file: string;
    /** `"as written"` (the generator's F32/F16) or the llama-quantize type. */
    variant: string;
    bytes: number;
    steps: Record<CorpusStepName, CorpusStep>;
    /** Things worth knowing that are not failures (weight matrices without a tensorwise role, …). */
    notes: string[];
};

export type CorpusRunOptions = {
    /** bin/tensorwise.mjs of a built checkout. */
    readonly cli: string;
    /** greedy-tokens built against the CPU libraries, and against the GPU build's (null: no GPU step). */
    readonly stock: {readonly cpu: string; readonly gpu: string | null};
    /** The GPU build (`--gpu vulkan`) and its device's buffer type, or why there is none here. */
    readonly gpu: {readonly kind: "vulkan" | "cuda"; readonly device: string} | {readonly skip: string};
    /** Placement files go here. */
    readonly workDir: string;
    /** Defaults to 8. */
    readonly maxTokens?: number;
    /** Defaults to "hello". */
    readonly prompt?: string;
    /** CPU threads for tensorwise and stock alike. Defaults to 1. */
    readonly threads?: number;
    /** `plan --profile-seconds` (the plan is checked, not its accuracy). Defaults to 1. */
    readonly profileSeconds?: number;
    /** Context size; at most the model's trained context. Defaults to 256. */
    readonly contextSize?: number;
    /** Per command. Defaults to 300 000 (a cold Mesa shader cache compiles every pipeline on first use). */
    readonly timeoutMs?: number;
};

type CliRun = {ok: true; json: unknown; ms: number} | {ok: false; reason: string; ms: number};

/** Mesa's llvmpipe visible unless the caller chose otherwise; no gdb backtrace on an abort (slow, and noise in reasons). */
function childEnv(): NodeJS.ProcessEnv {
    return {...process.env, GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0", GGML_NO_BACKTRACE: "1"};
}

async function runCli(options: CorpusRunOptions, args: string[]): Promise<CliRun> {
    const started = performance.now();
    const run = await runProgram(process.execPath, [options.cli, ...args], {timeoutMs: options.timeoutMs ?? 300_000, env: childEnv()});
    const ms = performance.now() - started;
    if (run.status === 0) {
        try {
            return {ok: true, json: JSON.parse(run.stdout) as unknown, ms};
        } catch {
            return {ok: false, reason: `tensorwise ${args[0]} printed no JSON`, ms};
        }
    }
    const how = describeEnd(run);
    const lines = run.stderr.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("usage:"));
    const errorLine = lines.find((line) => line.startsWith("error:")) ?? lines[lines.length - 1] ?? "no output";
    return {ok: false, reason: `tensorwise ${args[0]} failed (${how}): ${errorLine.slice(0, 300)}`, ms};
}

type InspectJson = {
    architecture?: string; contextLength?: number | null; tensorBytes?: number;
    tensors?: {name: string; layer: number | null; role: string; shape: number[]; bytes: number}[];
};
type ChatJson = {
    tokens?: {prompt: number[]; reply: number[]};
    stopReason?: string;
    placement?: {llamaCppFlags?: string};
    measured?: {bufferTypes?: {bufferType: string; isHost: boolean; weightsBytes: number; kvCacheBytes: number}[]};
};

const step = (status: CorpusStepStatus, reason: string | null, ms = 0): CorpusStep => ({status, reason, ms});

/** The tensors `inspect` listed (name, layer, shape), for choosing the quantized variants. */
export type InspectedTensor = CorpusTensor & {readonly shape: readonly number[]};

/**
 * Runs every step on one model file; never throws for a failing model, each step says why. Returns the result and the
 * tensors inspect listed (`null` when it failed).
 */
export async function checkCorpusModel(modelPath: string, model: {arch: string; variant: string},
    options: CorpusRunOptions): Promise<{result: CorpusModelResult; tensors: InspectedTensor[] | null}> {
    const maxTokens = options.maxTokens ?? 8;
    const threads = String(options.threads ?? 1);
    const notes: string[] = [];
    const result: CorpusModelResult = {
        arch: model.arch, file: path.basename(modelPath), variant: model.variant, bytes: fs.statSync(modelPath).size,
        steps: {inspect: step("skipped", null), plan: step("skipped", null), cpu: step("skipped", null), gpu: step("skipped", null)},
        notes
    };

    const inspected = await runCli(options, ["inspect", modelPath, "--json"]);
    let tensors: InspectedTensor[] | null = null;
    let contextSize = options.contextSize ?? 256;
    if (inspected.ok) {
        const json = inspected.json as InspectJson;
        tensors = json.tensors ?? null;
        if (json.contextLength != null && json.contextLength > 0) contextSize = Math.min(contextSize, json.contextLength);
        const unknown = (json.tensors ?? []).filter((tensor) => tensor.role === "other" && tensor.shape.length >= 2);
        if (unknown.length > 0) {
            const share = unknown.reduce((sum, tensor) => sum + tensor.bytes, 0) / Math.max(1, json.tensorBytes ?? 1);
            notes.push(`${unknown.length} weight matrices (${(100 * share).toFixed(0)}% of the bytes) have no tensorwise role`);
        }
        result.steps.inspect = tensors == null ? step("fail", "inspect --json listed no tensors", inspected.ms) : step("ok", null, inspected.ms);
    } else {
        result.steps.inspect = step("fail", inspected.reason, inspected.ms);
    }

    const gpuKind = "kind" in options.gpu ? options.gpu.kind : "cpu";
    const planned = await runCli(options, ["plan", modelPath, "--budget", "50%", "--strategy", "optimal", "--gpu", gpuKind,
        "--context", String(contextSize), "--prompt-tokens", "16", "--gen-tokens", String(maxTokens), "--threads", threads,
        "--profile-seconds", String(options.profileSeconds ?? 1), "--json"]);
    if (planned.ok) {
        const plan = planned.json as {fits?: boolean; reason?: string | null};
        result.steps.plan = plan.fits === false ? step("fail", `no plan fits: ${plan.reason ?? "no reason given"}`, planned.ms) : step("ok", null, planned.ms);
    } else {
        result.steps.plan = step("fail", planned.reason, planned.ms);
    }

    const chatArgs = ["--prompt", options.prompt ?? "hello", "--max-tokens", String(maxTokens), "--temperature", "0",
        "--context", String(contextSize), "--threads", threads, "--json"];
    result.steps.cpu = await chatAgainstStock(options, modelPath, {gpu: "cpu", program: options.stock.cpu, chatArgs, contextSize, maxTokens});

    if (!("kind" in options.gpu)) {
        result.steps.gpu = step("skipped", options.gpu.skip);
    } else if (options.stock.gpu == null) {
        result.steps.gpu = step("skipped", "no stock greedy-tokens for the GPU build");
    } else if (tensors == null) {
        result.steps.gpu = step("fail", "the mixed placement needs inspect's tensor list");
    } else {
        const placement = mixedCorpusPlacement(tensors, options.gpu.device);
        if (placement == null) {
            result.steps.gpu = step("skipped", "no repeating layers to split between the devices");
        } else {
            fs.mkdirSync(options.workDir, {recursive: true});
            const file = path.join(options.workDir, `${path.basename(modelPath, ".gguf")}.placement.json`);
            fs.writeFileSync(file, JSON.stringify(placement.file));
            result.steps.gpu = await chatAgainstStock(options, modelPath, {
                gpu: options.gpu.kind, program: options.stock.gpu, chatArgs: [...chatArgs, "--placement", file], contextSize, maxTokens, mixed: true
            });
        }
    }
    return {result, tensors};
}

/** `chat` on one build, then stock greedy-tokens on the flags it printed; tokens and bytes per buffer type compared. */
async function chatAgainstStock(options: CorpusRunOptions, modelPath: string,
    run: {gpu: string; program: string; chatArgs: string[]; contextSize: number; maxTokens: number; mixed?: boolean}): Promise<CorpusStep> {
    const chat = await runCli(options, ["chat", modelPath, "--gpu", run.gpu, ...run.chatArgs]);
    const stockRun = (llamaCppFlags: string, promptIds: readonly number[]) => runStockGreedy(run.program, {
        llamaCppFlags, promptIds, maxTokens: run.maxTokens, contextSize: run.contextSize
    }, {timeoutMs: options.timeoutMs, env: childEnv()});
    if (!chat.ok) {
        // does stock llama.cpp run this model on this build at all? (whole layers: tensorwise's line is unavailable)
        const stock = await stockRun(`llama-cli -m ${quote(modelPath)} -ngl ${run.mixed === true ? 999 : 0} -t ${options.threads ?? 1}`, [1, 2, 3, 4, 5, 6, 7]);
        return stock.ok ? step("fail", chat.reason, chat.ms) : step("stock-fail", `stock llama.cpp fails too: ${stock.error}; ${chat.reason}`, chat.ms);
    }
    const json = chat.json as ChatJson;
    if (json.tokens == null || json.placement?.llamaCppFlags == null)
        return step("fail", "chat --json printed no token ids or llama.cpp flags (is dist/ built from this checkout?)", chat.ms);
    const stock = await stockRun(json.placement.llamaCppFlags, json.tokens.prompt);
    if (!stock.ok) return step("stock-fail", `tensorwise ran it, stock llama.cpp on the same flags did not: ${stock.error}`, chat.ms);
    const ours = json.tokens.reply;
    // a chat reply ends early at the chat template's stop text; stock's plain greedy loop goes on
    const stoppedEarly = json.stopReason === "stop-string" && ours.length < stock.tokens.length;
    const diverge = firstDifference(ours, stoppedEarly ? stock.tokens.slice(0, ours.length) : stock.tokens);
    if (diverge != null)
        return step("fail", `greedy tokens differ from stock llama.cpp's from token ${diverge}: tensorwise [${ours.join(",")}], stock [${stock.tokens.join(",")}]` +
            (json.stopReason != null && json.stopReason !== "max-tokens" ? ` (the chat ended: ${json.stopReason})` : ""), chat.ms);
    const measured = json.measured?.bufferTypes ?? [];
    const bytes = compareBytes(measured, stock.memory);
    if (bytes != null) return step("fail", `same tokens, but ${bytes}`, chat.ms);
    if (run.mixed === true) {
        const device = measured.filter((entry) => !entry.isHost).reduce((sum, entry) => sum + entry.weightsBytes, 0);
        const host = measured.filter((entry) => entry.isHost).reduce((sum, entry) => sum + entry.weightsBytes, 0);
        if (device === 0 || host === 0)
            return step("fail", `the forced placement was not mixed: ${formatMiB(device)} of weights on the device, ${formatMiB(host)} on the host`, chat.ms);
    }
    if (ours.length === 0) return step("fail", "no token was generated (tensorwise and stock alike)", chat.ms);
    if (stoppedEarly) return step("ok", `the chat ended at its template's stop text after ${ours.length} of ${stock.tokens.length} tokens; those agree with stock`, chat.ms);
    return step("ok", null, chat.ms);
}

function firstDifference(a: readonly number[], b: readonly number[]): number | null {
    for (let i = 0; i < Math.max(a.length, b.length); i++)
        if (a[i] !== b[i]) return i;
    return null;
}

/** Weights and KV cache per buffer type, tensorwise's measurement against stock llama.cpp's; `null` when equal. */
export function compareBytes(measured: readonly {bufferType: string; weightsBytes: number; kvCacheBytes: number}[], stock: readonly StockMemory[]): string | null {
    const ours = new Map<string, [number, number]>();
    for (const entry of measured) if (entry.weightsBytes > 0 || entry.kvCacheBytes > 0) ours.set(entry.bufferType, [entry.weightsBytes, entry.kvCacheBytes]);
    const theirs = new Map<string, [number, number]>();
    for (const entry of stock) if (entry.model > 0 || entry.context > 0) theirs.set(entry.bufferType, [entry.model, entry.context]);
    const names = [...new Set([...ours.keys(), ...theirs.keys()])].sort();
    const differing = names.filter((name) => (ours.get(name)?.[0] ?? 0) !== (theirs.get(name)?.[0] ?? 0) || (ours.get(name)?.[1] ?? 0) !== (theirs.get(name)?.[1] ?? 0));
    if (differing.length === 0) return null;
    const describe = (map: Map<string, [number, number]>) => names.map((name) => `${name} ${map.get(name)?.[0] ?? 0} B weights/${map.get(name)?.[1] ?? 0} B KV`).join(", ");
    return `bytes per buffer type differ (${differing.join(", ")}): tensorwise ${describe(ours)}; stock ${describe(theirs)}`;
}

function formatMiB(bytes: number): string {
    return `${(bytes / 1048576).toFixed(2)} MiB`;
}

function quote(text: string): string {
    return `'${text.replace(/'/g, "'\\''")}'`;
}
