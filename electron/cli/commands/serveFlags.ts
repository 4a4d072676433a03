/** `tensorwise serve`'s flags, checked against the bounds table before anything loads. */
import type {ParseArgsConfig} from "node:util";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {SCHEDULING_POLICY_NAMES, type SchedulingPolicyName} from "../../serve/schedulingPolicies.js";
import {refuseOpenHost} from "../../serve/serveOpenAi.js";
import type {CliIo} from "../CliIo.js";
import {flagKnobs, flagNumber, flagThreads, KNOB_OPTIONS, KNOB_USAGE, parseBudget, parseGpu, type FlagValue} from "../flags.js";
import {UsageError} from "../UsageError.js";
import {serveCommand} from "./serveCommand.js";

export const SERVE_USAGE = "tensorwise serve <model.gguf> [--auto [--budget MiB|N%] | --placement file.json] [--port N] [--host H] " +
    "[--parallel N] [--api-key K] [--queue N] [--timeout S] [--policy fair|fifo] [--context N] [--batch N] [--threads N] [--gpu auto|cpu|cuda|vulkan] " +
    `${KNOB_USAGE} [--kv-log decisions.jsonl] [--kv-measure-both]`;

export const SERVE_OPTIONS = {
    gpu: {type: "string", default: "auto"}, placement: {type: "string"}, auto: {type: "boolean", default: false}, budget: {type: "string"},
    host: {type: "string", default: "127.0.0.1"}, port: {type: "string", default: "8080"}, parallel: {type: "string", default: "4"},
    "api-key": {type: "string"}, queue: {type: "string", default: "64"}, timeout: {type: "string", default: "600"},
    policy: {type: "string", default: "fair"}, context: {type: "string"}, batch: {type: "string"}, threads: {type: "string"},
    "kv-log": {type: "string"}, "kv-measure-both": {type: "boolean", default: false}, ...KNOB_OPTIONS
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/**
 * Default of the micro-batch. The per-sequence context defaults to 2048 tokens, or the model's trained context where
 * that is smaller (defaultContextSize, electron/contract/settings.ts), resolved once the model is inspected.
 */
const DEFAULT_BATCH = 512;

export function serveRun(io: CliIo, modelPath: string, values: Record<string, FlagValue>): Promise<number> {
    if (values.placement != null && values.auto === true)
        throw new UsageError("give at most one of --placement and --auto");
    if (values.budget != null && values.auto !== true)
        throw new UsageError("--budget only applies to --auto (the planner's GPU budget): add --auto, or drop --budget");
    const apiKey = typeof values["api-key"] === "string" ? values["api-key"] : undefined;
    if (apiKey != null && (apiKey === "" || apiKey.length > TEXT_LIMITS.apiKey || /[^\x21-\x7e]/.test(apiKey)))
        throw new UsageError(`--api-key must be 1 to ${TEXT_LIMITS.apiKey} printable characters without spaces`);
    const host = String(values.host);
    const refused = refuseOpenHost(host, apiKey);
    if (refused != null)
        throw new UsageError(refused);
    const policy = String(values.policy);
    if (!(SCHEDULING_POLICY_NAMES as readonly string[]).includes(policy))
        throw new UsageError(`--policy must be ${SCHEDULING_POLICY_NAMES.join(" or ")} (got "${policy.slice(0, 40)}")`);
    return serveCommand(io, modelPath, {
        gpu: parseGpu(values.gpu),
        placement: values.placement as string | undefined,
        auto: values.auto === true,
        budget: values.budget == null ? undefined : parseBudget(String(values.budget)),
        host,
        port: flagNumber(values.port, "port", "port") as number,
        parallel: flagNumber(values.parallel, "parallel", "parallel") as number,
        apiKey,
        queueLength: flagNumber(values.queue, "queue", "queueLength") as number,
        requestTimeoutSeconds: flagNumber(values.timeout, "timeout", "requestTimeoutSeconds") as number,
        policy: policy as SchedulingPolicyName,
        contextSize: flagNumber(values.context, "context", "contextSize"),
        batchSize: flagNumber(values.batch, "batch", "batchSize") ?? DEFAULT_BATCH,
        threads: flagThreads(values.threads),
        knobs: flagKnobs(values),
        kvLogPath: typeof values["kv-log"] === "string" ? values["kv-log"] : undefined,
        kvMeasureBoth: values["kv-measure-both"] === true
    });
}
