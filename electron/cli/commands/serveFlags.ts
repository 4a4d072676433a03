/** `tensorwise serve`'s flags, checked against the bounds table before anything loads. */
import {readFileSync, statSync} from "node:fs";
import type {ParseArgsConfig} from "node:util";
import {parseLimitText, type LimitName} from "../../contract/limits.js";
import {canonicalCorsOrigins} from "../../contract/corsOrigins.js";
import {API_KEY_ENV, badApiKey, parseApiKeys} from "../../serve/http/apiKeys.js";
import type {KvDiskBudget} from "../../serve/kv/kvStateFolder.js";
import {SCHEDULING_POLICY_NAMES, type SchedulingPolicyName} from "../../serve/scheduling/schedulingPolicies.js";
import {refuseOpenHost} from "../../serve/http/HttpServer.js";
import type {CliIo} from "../CliIo.js";
import {
    flagKnobs, flagNumber, flagSpeculative, flagThreads, KNOB_OPTIONS, KNOB_USAGE, parseBudget, parseGpu, SPEC_OPTIONS, SPEC_USAGE, type FlagValue
} from "../flags.js";
import {UsageError} from "../UsageError.js";
import {serveCommand} from "./serveCommand.js";

export const SERVE_USAGE = "tensorwise serve <model.gguf> [--auto [--budget MiB|N%] | --placement file.json] [--port N] [--host H] [--alias NAME] [--seed N] " +
    "[--parallel N] [--api-key-file keys.txt] [--cors-origin origin,…] [--queue N] [--timeout S] [--policy fair|fifo] [--context N] [--batch N] [--threads N] [--gpu auto|cpu|cuda|vulkan] " +
    `${KNOB_USAGE} ${SPEC_USAGE} [--kv-log decisions.jsonl] [--kv-measure-both] [--kv-disk-budget MiB|N%] (API keys also from ${API_KEY_ENV})`;

export const SERVE_OPTIONS = {
    gpu: {type: "string", default: "auto"}, placement: {type: "string"}, auto: {type: "boolean", default: false}, budget: {type: "string"},
    host: {type: "string", default: "127.0.0.1"}, alias: {type: "string"}, seed: {type: "string"}, port: {type: "string", default: "8080"}, parallel: {type: "string", default: "4"},
    "api-key": {type: "string"}, "api-key-file": {type: "string"}, "cors-origin": {type: "string"}, queue: {type: "string", default: "64"}, timeout: {type: "string", default: "600"},
    policy: {type: "string", default: "fair"}, context: {type: "string"}, batch: {type: "string"}, threads: {type: "string"},
    "kv-log": {type: "string"}, "kv-measure-both": {type: "boolean", default: false}, "kv-disk-budget": {type: "string"}, ...KNOB_OPTIONS, ...SPEC_OPTIONS
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
    const apiKeys = serveApiKeys(io, values, process.env);
    const host = String(values.host);
    const refused = refuseOpenHost(host, apiKeys);
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
        alias: values.alias == null ? undefined : parseModelAlias(String(values.alias)),
        defaultSeed: values.seed == null ? undefined : parseSeed(String(values.seed)),
        port: flagNumber(values.port, "port", "port") as number,
        parallel: flagNumber(values.parallel, "parallel", "parallel") as number,
        apiKeys,
        corsOrigins: values["cors-origin"] == null ? [] : parseCorsOrigins(String(values["cors-origin"])),
        queueLength: flagNumber(values.queue, "queue", "queueLength") as number,
        requestTimeoutSeconds: flagNumber(values.timeout, "timeout", "requestTimeoutSeconds") as number,
        policy: policy as SchedulingPolicyName,
        contextSize: flagNumber(values.context, "context", "contextSize"),
        batchSize: flagNumber(values.batch, "batch", "batchSize") ?? DEFAULT_BATCH,
        threads: flagThreads(values.threads),
        knobs: flagKnobs(values),
        ...(() => {
            const speculative = flagSpeculative(values);
            return speculative != null ? {speculative} : {};
        })(),
        kvLogPath: typeof values["kv-log"] === "string" ? values["kv-log"] : undefined,
        kvMeasureBoth: values["kv-measure-both"] === true,
        kvDiskBudget: values["kv-disk-budget"] == null ? undefined : parseKvDiskBudget(String(values["kv-disk-budget"]))
    });
}

/**
 * The API keys from every source given: `--api-key-file` (one key a line), the {@link API_KEY_ENV} environment
 * variable (whitespace-separated), and `--api-key` (kept for old scripts, with a warning: any user of this machine
 * sees a process's arguments in `ps`). Each key is its own tenant; the same key twice is refused.
 */
export function serveApiKeys(io: CliIo, values: Record<string, FlagValue>, env: NodeJS.ProcessEnv): string[] {
    const keys: string[] = [];
    const add = (more: readonly string[], source: string) => {
        for (const key of more) {
            if (keys.includes(key))
                throw new UsageError(`${source} repeats an API key given elsewhere; give each client its own key`);
            keys.push(key);
        }
    };
    const file = values["api-key-file"];
    if (typeof file === "string") {
        let text: string;
        try {
            text = readFileSync(file, "utf8");
        } catch (error) {
            throw new UsageError(`--api-key-file ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
        }
        add(parseKeys(text, `--api-key-file ${file}`), "--api-key-file");
        if (process.platform !== "win32" && (statSync(file).mode & 0o077) !== 0)
            io.err(`warning: ${file} can be read by other users of this machine; chmod 600 it`);
    }
    const fromEnv = env[API_KEY_ENV];
    if (fromEnv != null)
        add(parseKeys(fromEnv, API_KEY_ENV), API_KEY_ENV);
    const flag = values["api-key"];
    if (typeof flag === "string") {
        const bad = badApiKey(flag);
        if (bad != null)
            throw new UsageError(`--api-key ${bad}`);
        io.err(`warning: --api-key is visible to every user of this machine (ps shows a process's arguments); use --api-key-file or ${API_KEY_ENV}`);
        add([flag], "--api-key");
    }
    return keys;
}

function parseKeys(text: string, source: string): string[] {
    try {
        return parseApiKeys(text, source);
    } catch (error) {
        throw new UsageError((error as Error).message.replace(/\.$/, ""));
    }
}

/**
 * `--seed N`: the seed of every request that sends none (as llama-server's `--seed`), so the same sampled request gets
 * the same reply; a request's own `seed` still wins. An integer 0 to 2³²−1, as llama.cpp's `llama_sampler_init_dist` takes.
 */
export function parseSeed(text: string): number {
    const seed = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(seed) || seed > 0xffff_ffff)
        throw new UsageError(`--seed must be an integer from 0 to 4294967295 (got ${JSON.stringify(text.slice(0, 40))})`);
    return seed;
}

/** The longest `--alias`: a model id clients send back in `model`, not a text. */
export const MAX_MODEL_ALIAS_CHARS = 128;

/**
 * `--alias NAME`: the model id `GET /v1/models` lists and answers carry, in place of the file name (as llama-server's
 * `--alias`). Printable ASCII without spaces, as clients put it in URLs (`/v1/models/{id}`) and config files.
 */
export function parseModelAlias(text: string): string {
    if (text.length === 0 || text.length > MAX_MODEL_ALIAS_CHARS || !/^[\x21-\x7e]+$/.test(text))
        throw new UsageError(`--alias must be 1 to ${MAX_MODEL_ALIAS_CHARS} printable ASCII characters without spaces (got ${JSON.stringify(text.slice(0, 40))})`);
    return text;
}

/** `--cors-origin http://localhost:5173,https://app.example`: exact web origins, comma-separated (contract/corsOrigins.ts). */
export function parseCorsOrigins(text: string): string[] {
    try {
        return canonicalCorsOrigins(text.split(",").map((part) => part.trim()));
    } catch (error) {
        throw new UsageError(`--cors-origin: ${(error as Error).message.replace(/\.$/, "")}`);
    }
}

/** `--kv-disk-budget`: MiB (`512`, `512MiB`; 0 never swaps) or a percentage of the state folder's free space (`5%`). */
export function parseKvDiskBudget(text: string): KvDiskBudget {
    const percent = text.endsWith("%");
    const number = percent ? text.slice(0, -1) : /^(.*?)(?:MiB)?$/i.exec(text)?.[1] ?? text;
    const limit: LimitName = percent ? "kvDiskBudgetPercent" : "kvDiskBudgetMiB";
    const checked = parseLimitText(limit, number);
    if (!checked.ok)
        throw new UsageError(`--kv-disk-budget must be MiB (e.g. 512) or a share of the free space (e.g. 5%): ${checked.message}`);
    return percent ? {kind: "percent-free", percent: checked.value} : {kind: "mib", mib: checked.value};
}
