import {createWriteStream} from "node:fs";
import path from "node:path";
import type {Budget} from "../../contract/ipc.js";
import {SERVER_STARTUP_STEP_TEXT} from "../../contract/server.js";
import type {RuntimeSettings} from "../../contract/settings.js";
import {LlamaLogLevel, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import {defaultProfileCacheDir} from "../../engine/profiler/profileMachine.js";
import {EngineService} from "../../engineProcess/EngineService.js";
import {schedulingPolicy, type SchedulingPolicyName} from "../../serve/scheduling/schedulingPolicies.js";
import {describeKvCostModel} from "../../serve/kv/describeKvCostModel.js";
import type {KvDiskBudget} from "../../serve/kv/kvStateFolder.js";
import {serveOpenAi} from "../../serve/serveOpenAi.js";
import {progressLines, type CliIo} from "../CliIo.js";
import {loadFromFlags} from "../loadFromFlags.js";
import type {SpeculativeRequest} from "../../contract/speculative.js";

export type ServeCommandOptions = {
    gpu: EngineGpu;
    placement?: string;
    auto: boolean;
    budget?: Budget;
    host: string;
    /** The model id the API lists and answers with. Defaults to the model's file name. */
    alias?: string;
    /** `--seed`: the seed of a request that sends none. */
    defaultSeed?: number;
    port: number;
    parallel: number;
    /** Every client's key (each its own tenant); empty: none required (loopback only). */
    apiKeys: string[];
    /** Web origins whose pages may call the server (CORS); empty: none. */
    corsOrigins: string[];
    queueLength: number;
    requestTimeoutSeconds: number;
    policy: SchedulingPolicyName;
    /** Per sequence. Defaults to 2048 tokens, or the model's trained context where that is smaller (defaultContextSize). */
    contextSize?: number;
    batchSize: number;
    threads?: number;
    /** llama.cpp knobs the user fixed (flagKnobs, electron/cli/flags.ts). */
    knobs?: Partial<RuntimeSettings>;
    /** Speculative decoding each sequence runs (`--spec`, `--model-draft`, …); absent: none. */
    speculative?: SpeculativeRequest;
    /** Appends every swap-vs-recompute decision to this file as one JSON line. */
    kvLogPath?: string;
    /** Measure both swap and recompute at every restore (benchmark mode). */
    kvMeasureBoth: boolean;
    /** Disk the swapped-out KV state files may take. Defaults to a share of the temp dir's free space (kvStateFolder.ts). */
    kvDiskBudget?: KvDiskBudget;
};

/**
 * `tensorwise serve <gguf>`: loads the model (layers on the GPU, a placement file, or `--auto`) with `parallel`
 * sequences and serves it through the OpenAI-compatible API until SIGINT/SIGTERM. Prints the base URL on stdout
 * (`listening on http://…/v1`) once it answers.
 */
export async function serveCommand(io: CliIo, modelPath: string, options: ServeCommandOptions): Promise<number> {
    const printProgress = progressLines(io);
    const service = await EngineService.create({
        gpu: options.gpu, maxThreads: options.threads, sequences: options.parallel, logLevel: LlamaLogLevel.warn,
        onLog: (level, message) => {
            if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal)
                io.err(`llama.cpp: ${message.trim()}`);
        },
        onProgress: (progress) => {
            if (progress.step !== "load")
                printProgress(`${progress.step}: ${progress.detail ?? ""}`);
        }
    });
    try {
        const state = await loadFromFlags(service, modelPath, options, "serve");
        const placed = service.placedModel();
        if (placed == null)
            throw new Error("the model did not stay loaded");
        const kvLog = options.kvLogPath == null ? null : createWriteStream(path.resolve(options.kvLogPath), {flags: "a"});
        const server = await serveOpenAi({
            placed, modelId: options.alias ?? state.card.fileName, defaultSeed: options.defaultSeed, host: options.host, port: options.port, apiKeys: options.apiKeys, corsOrigins: options.corsOrigins,
            queueLength: options.queueLength, requestTimeoutMs: options.requestTimeoutSeconds * 1000,
            policy: schedulingPolicy(options.policy), log: (line) => io.err(line),
            onStartup: (step, fraction) => printProgress(`serve: ${SERVER_STARTUP_STEP_TEXT[step]}${fraction != null ? ` · ${Math.round(fraction * 100)}%` : ""}`),
            kv: {cacheDir: defaultProfileCacheDir(), measureBoth: options.kvMeasureBoth, diskBudget: options.kvDiskBudget, onDecision: kvLog == null ? undefined : (decision) => kvLog.write(JSON.stringify(decision) + "\n")}
        });
        io.err(`${describeKvCostModel(server.kv.costModel)}; state files may take ${(server.kv.diskBudgetBytes / 1024 / 1024).toFixed(0)} MiB`);
        io.err(`serving ${state.card.fileName}${options.alias != null ? ` as "${options.alias}"` : ""} (${state.placement.strategy}) with ${options.parallel} parallel sequence(s) of ` +
            `${placed.context.contextSize} tokens, queue ${options.queueLength}, ${options.policy} scheduling, ${options.apiKeys.length} API key(s); Ctrl-C stops`);
        if (state.speculative != null) io.err(`speculative: ${state.speculative.sentence}`);
        io.err(`try: curl ${server.url}/chat/completions -H 'Content-Type: application/json'` +
            `${options.apiKeys.length > 0 ? " -H 'Authorization: Bearer <key>'" : ""} -d '{"messages":[{"role":"user","content":"Hello"}]}'`);
        io.out(`listening on ${server.url}`);
        await new Promise<void>((resolve) => {
            process.once("SIGINT", resolve);
            process.once("SIGTERM", resolve);
        });
        io.err("stopping");
        await server.close();
        kvLog?.end();
        return 0;
    } finally {
        await service.dispose();
    }
}
