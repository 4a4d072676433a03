/**
 * The trust boundary: one check per request of the contract, applied by {@link HostService.handle} to every request
 * whatever its transport (web mode's untrusted JSON and Electron IPC alike). A check returns the argument as its
 * contract type, with every number inside the one bounds table (`electron/contract/limits.ts`), or throws a
 * `bad-request` {@link TensorwiseError} whose message says which field is wrong and what is allowed. Each check is
 * typed against the contract's argument type ({@link Checks}), so a field added to a request fails to compile here
 * until it is checked.
 */
import {LLAMA_COMMAND_LOADS, LLAMA_COMMAND_MAX_CHARS, type LlamaCommandRequest} from "../contract/llamaCommand.js";
import {isIP} from "node:net";
import {availableParallelism} from "node:os";
import {BENCH_EXPORT_FORMATS, isBenchExportFormat, type BenchExportFormat, type BenchStartRequest} from "../contract/bench.js";
import type {ChatSettings, RequestArg, RequestName} from "../contract/ipc.js";
import {LIMITS, limitMessage, TEXT_LIMITS, withinLimit, type LimitName} from "../contract/limits.js";
import {CLIENT_KEY_NAME_PATTERN, type ServerChange} from "../contract/server.js";
import {canonicalCorsOrigins, MAX_CORS_ORIGIN_LENGTH, MAX_CORS_ORIGINS} from "../contract/corsOrigins.js";
import {parseRpcEndpoint} from "../engine/rpc/parseRpcEndpoint.js";
import {REPO_ID_PATTERN} from "../engine/hub/listRepoFiles.js";
import {HUB_QUERY_MAX_CHARS} from "../contract/hub.js";
import {
    CONVERSATION_EXPORT_FORMATS, CONVERSATION_IMPORT_MAX_CHARS, isConversationExportFormat, SEARCH_QUERY_MAX_CHARS
} from "../contract/conversationFile.js";
import {isKvCacheType, KV_CACHE_TYPES, settingsConflict, type Budget, type FixedBudget, type RuntimeSettings} from "../contract/settings.js";
import {isPlacementStrategy, isStrategyName, PLACEMENT_STRATEGIES, STRATEGY_NAMES} from "../contract/strategies.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {isSpeculativeChoice, SPECULATIVE_CHOICES, type SpeculativeRequest} from "../contract/speculative.js";
import {checkSpeculativeRequest} from "../engine/speculative/checkSpeculativeModels.js";
import {CONTEXT_OVERFLOW_POLICIES, isContextOverflowPolicy} from "../contract/contextOverflow.js";
import {CHAT_SETTING_KEYS} from "./chat/replySettings.js";
import {isToolChoice, isToolDecision, MAX_CHAT_TOOLS, MCP_TOOL_NAME_CHARS, TOOL_CHOICES, TOOL_DECISIONS, type ChatToolSettings} from "../contract/tools.js";
import {checkMcpServerConfig, serverName} from "./tools/checkMcpServerConfig.js";

export type Fields = Record<string, unknown>;

/** `fields.repo` as a hub repository id, `owner/name`. */
function repoId(fields: Fields): string {
    const repo = string(fields, "repo", 193);
    if (!REPO_ID_PATTERN.test(repo))
        throw bad(`"repo" must be a repository id such as owner/name`);
    return repo;
}

/** A `bad-request` error with `message`. */
export function bad(message: string): TensorwiseError {
    return new TensorwiseError("bad-request", message);
}

/** The argument as an object with only `allowed` keys. */
export function object(arg: unknown, allowed: readonly string[], what = "the request"): Fields {
    if (arg == null || typeof arg !== "object" || Array.isArray(arg))
        throw bad(`${what} needs an argument object`);
    const unknown = Object.keys(arg).filter((key) => !allowed.includes(key));
    if (unknown.length > 0)
        throw bad(`${what} has unknown fields: ${unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 40))).join(", ")}`);
    return arg as Fields;
}

/** `fields[key]` as a string of at most `maxChars` characters (non-empty unless `allowEmpty`). */
export function string(fields: Fields, key: string, maxChars: number, options: {allowEmpty?: boolean} = {}): string {
    const value = fields[key];
    if (typeof value !== "string" || (value === "" && options.allowEmpty !== true))
        throw bad(`"${key}" must be a${options.allowEmpty === true ? "" : " non-empty"} string`);
    if (value.length > maxChars)
        throw bad(`"${key}" is longer than ${maxChars} characters`);
    return value;
}

function optionalString(fields: Fields, key: string, maxChars: number): string | undefined {
    return fields[key] == null ? undefined : string(fields, key, maxChars, {allowEmpty: true});
}

function number(fields: Fields, key: string, limit: LimitName, tighter?: {max: number; reason: string}): number {
    const value = fields[key];
    if (!withinLimit(limit, value, tighter?.max))
        throw bad(`"${key}": ${limitMessage(limit, value, tighter)}`);
    return value;
}

export function optionalNumber(fields: Fields, key: string, limit: LimitName): number | undefined {
    return fields[key] == null ? undefined : number(fields, key, limit);
}

function boolean(fields: Fields, key: string): boolean | undefined {
    const value = fields[key];
    if (value != null && typeof value !== "boolean")
        throw bad(`"${key}" must be true or false`);
    return value ?? undefined;
}

/** A list of 1 to {@link LIMITS.listLength} items, each checked by `item`. */
function list<T>(fields: Fields, key: string, what: string, item: (value: unknown) => T): T[] {
    const value = fields[key];
    if (!Array.isArray(value) || !withinLimit("listLength", value.length))
        throw bad(`"${key}" must be a list of ${LIMITS.listLength.min} to ${LIMITS.listLength.max} ${what}`);
    return value.map(item);
}

/**
 * A load's speculative decoding: a choice by name, a draft model's path (only with `draft` or `auto`), bounded lengths;
 * what does not go together is refused by engine/speculative/checkSpeculativeModels.ts's checkSpeculativeRequest.
 */
function speculative(value: unknown): SpeculativeRequest {
    const fields = object(value, ["choice", "draftPath", "nMax", "ngramSizeN", "ngramSizeM"], '"speculative"');
    if (!isSpeculativeChoice(fields.choice))
        throw bad(`"speculative.choice" must be one of ${SPECULATIVE_CHOICES.join(", ")}`);
    // read under their full names, so a refusal names "speculative.nMax", not a field of the request itself
    const named: Fields = Object.fromEntries(Object.entries(fields).map(([key, field]) => [`speculative.${key}`, field]));
    const draftPath = optionalString(named, "speculative.draftPath", TEXT_LIMITS.path);
    if (draftPath === "") throw bad(`"speculative.draftPath" must be a non-empty string`);
    const nMax = optionalNumber(named, "speculative.nMax", "draftMax");
    const ngramSizeN = optionalNumber(named, "speculative.ngramSizeN", "ngramSize");
    const ngramSizeM = optionalNumber(named, "speculative.ngramSizeM", "ngramSize");
    const request: SpeculativeRequest = {choice: fields.choice, ...(draftPath != null && {draftPath}), ...(nMax != null && {nMax}),
        ...(ngramSizeN != null && {ngramSizeN}), ...(ngramSizeM != null && {ngramSizeM})};
    try {
        checkSpeculativeRequest(request);
    } catch (error) {
        throw bad(`"speculative": ${(error as Error).message}`);
    }
    return request;
}

/**
 * `llamaCommand`: a command line of bounded length and what to load. The line is read (and refused flag by flag) by
 * the engine's parser; here only its shape: a string without NUL, and `load` one of {@link LLAMA_COMMAND_LOADS}.
 */
function llamaCommand(value: unknown): LlamaCommandRequest {
    const fields = object(value, ["line", "load"], '"llamaCommand"');
    const named: Fields = Object.fromEntries(Object.entries(fields).map(([key, field]) => [`llamaCommand.${key}`, field]));
    const line = string(named, "llamaCommand.line", LLAMA_COMMAND_MAX_CHARS);
    if (line.trim() === "") throw bad(`"llamaCommand.line" must be a llama.cpp command line, not empty`);
    if (line.includes("\0")) throw bad(`"llamaCommand.line" must not contain NUL characters`);
    if (typeof fields.load !== "string" || !(LLAMA_COMMAND_LOADS as readonly string[]).includes(fields.load))
        throw bad(`"llamaCommand.load" must be one of ${LLAMA_COMMAND_LOADS.join(", ")}`);
    return {line, load: fields.load as LlamaCommandRequest["load"]};
}

function budget(value: unknown, what = '"budget"'): Budget {
    const fields = object(value, ["kind", "mib", "percent"], what);
    if (fields.kind === "auto")
        return {kind: "auto"};
    if (fields.kind === "mib")
        return {kind: "mib", mib: number(fields, "mib", "budgetMiB")};
    if (fields.kind === "percent")
        return {kind: "percent", percent: number(fields, "percent", "budgetPercent")};
    throw bad(`${what} needs "kind": "auto", "mib" or "percent"`);
}

/** A benchmark budget: a fixed size or share (`auto` depends on the moment's free VRAM). */
function fixedBudget(value: unknown): FixedBudget {
    const checked = budget(value, "each budget");
    if (checked.kind === "auto")
        throw bad('each budget must be {kind: "percent", percent} or {kind: "mib", mib}: a benchmark compares fixed budgets');
    return checked;
}

/** A list of token counts within `limit`. */
function lengths(fields: Fields, key: string, limit: LimitName): number[] {
    return list(fields, key, "integers", (item) => {
        if (!withinLimit(limit, item))
            throw bad(`"${key}": ${limitMessage(limit, item)}`);
        return item;
    });
}

/** Runtime settings a client may set; absent or `null` fields keep the engine's defaults. */
function settings(value: unknown): Partial<RuntimeSettings> {
    const fields = object(value ?? {}, ["contextSize", "batchSize", "threads", "useMmap", "useGpu", "opOffload", "kvOffload", "flashAttention", "kvCacheType"], '"settings"');
    const result: Partial<RuntimeSettings> = {};
    if (fields.contextSize != null)
        result.contextSize = number(fields, "contextSize", "contextSize");
    if (fields.batchSize != null)
        result.batchSize = number(fields, "batchSize", "batchSize");
    if (fields.threads !== undefined)
        result.threads = fields.threads === null ? null
            : number(fields, "threads", "threads", {max: availableParallelism(), reason: `this machine has ${availableParallelism()} logical cores`});
    for (const key of ["useMmap", "useGpu", "opOffload", "kvOffload", "flashAttention"] as const) {
        if (fields[key] === undefined) continue;
        if (fields[key] !== null && typeof fields[key] !== "boolean")
            throw bad(`"settings.${key}" must be true, false or null`);
        result[key] = fields[key] as boolean | null;
    }
    if (fields.kvCacheType != null) {
        if (!isKvCacheType(fields.kvCacheType))
            throw bad(`"settings.kvCacheType" must be one of ${KV_CACHE_TYPES.join(", ")}`);
        result.kvCacheType = fields.kvCacheType;
    }
    const conflict = settingsConflict({kvCacheType: result.kvCacheType ?? "f16", flashAttention: result.flashAttention ?? null});
    if (conflict != null)
        throw bad(`"settings": ${conflict}`);
    return result;
}

function exportFormat(fields: Fields): BenchExportFormat {
    if (!isBenchExportFormat(fields.format))
        throw bad(`"format" must be one of ${BENCH_EXPORT_FORMATS.join(", ")}`);
    return fields.format;
}

/** Sampling options of a reply. */
function replyOptions(fields: Fields): {maxTokens?: number; temperature?: number} {
    const maxTokens = optionalNumber(fields, "maxTokens", "maxTokens");
    const temperature = optionalNumber(fields, "temperature", "temperature");
    return {...(maxTokens != null && {maxTokens}), ...(temperature != null && {temperature})};
}

/** A conversation's tools: at most {@link MAX_CHAT_TOOLS} distinct `{server, tool}`, and a tool choice. */
function chatTools(value: unknown): ChatToolSettings {
    const fields = object(value, ["on", "choice"], '"settings.tools"');
    if (!isToolChoice(fields.choice))
        throw bad(`"settings.tools.choice" must be one of ${TOOL_CHOICES.join(", ")}`);
    const on = fields.on;
    if (!Array.isArray(on) || on.length > MAX_CHAT_TOOLS)
        throw bad(`"settings.tools.on" must be a list of at most ${MAX_CHAT_TOOLS} tools`);
    const refs = on.map((entry, index) => {
        const ref = object(entry, ["server", "tool"], `"settings.tools.on[${index}]"`);
        return {server: serverName(ref, "server", `settings.tools.on[${index}]: `), tool: string(ref, "tool", MCP_TOOL_NAME_CHARS)};
    });
    const keys = new Set(refs.map((ref) => JSON.stringify([ref.server, ref.tool])));
    if (keys.size !== refs.length)
        throw bad('"settings.tools.on" names a tool twice');
    return {on: refs, choice: fields.choice};
}

/** A conversation's settings: every field optional, every number within its limit, stop strings a short list. */
export function chatSettings(value: unknown): ChatSettings {
    const fields = object(value ?? {}, [...CHAT_SETTING_KEYS, "tools"], '"settings"');
    const result: ChatSettings = {};
    const systemPrompt = optionalString(fields, "systemPrompt", TEXT_LIMITS.systemPrompt);
    if (systemPrompt != null)
        result.systemPrompt = systemPrompt;
    for (const key of ["maxTokens", "temperature", "topK", "topP", "minP", "repeatPenalty", "seed"] as const) {
        const number = optionalNumber(fields, key, key);
        if (number != null)
            result[key] = number;
    }
    if (fields.stopStrings != null) {
        const list = fields.stopStrings;
        if (!Array.isArray(list) || !withinLimit("stopStrings", list.length))
            throw bad(`"stopStrings" must be a list of at most ${LIMITS.stopStrings.max} strings`);
        result.stopStrings = list.map((entry, index) => string({[`stopStrings[${index}]`]: entry}, `stopStrings[${index}]`, TEXT_LIMITS.stopString));
    }
    if (fields.contextOverflow != null) {
        if (!isContextOverflowPolicy(fields.contextOverflow))
            throw bad(`"contextOverflow" must be one of ${CONTEXT_OVERFLOW_POLICIES.join(", ")}`);
        result.contextOverflow = fields.contextOverflow;
    }
    if (fields.tools != null)
        result.tools = chatTools(fields.tools);
    return result;
}

/** A change to the server's settings: each field optional, the port and parallel sequences within their limits. */
function serverChange(arg: unknown): ServerChange {
    const fields = object(arg, ["enabled", "port", "bindAddress", "requireKey", "parallel", "kvDiskBudgetMiB", "corsOrigins", "regenerateKey", "addClientKey", "revokeClientKey"]);
    const change: ServerChange = {};
    for (const key of ["enabled", "requireKey", "regenerateKey"] as const) {
        const value = boolean(fields, key);
        if (value != null)
            change[key] = value;
    }
    if (fields.port != null)
        change.port = number(fields, "port", "port");
    if (fields.parallel != null)
        change.parallel = number(fields, "parallel", "parallel");
    // null: back to the default share of free space
    if (fields.kvDiskBudgetMiB !== undefined)
        change.kvDiskBudgetMiB = fields.kvDiskBudgetMiB === null ? null : number(fields, "kvDiskBudgetMiB", "kvDiskBudgetMiB");
    if (fields.corsOrigins != null) {
        const list = fields.corsOrigins;
        if (!Array.isArray(list) || list.length > MAX_CORS_ORIGINS)
            throw bad(`"corsOrigins" must be a list of at most ${MAX_CORS_ORIGINS} web origins such as "http://localhost:5173"`);
        const texts = list.map((entry, index) => string({[`corsOrigins[${index}]`]: entry}, `corsOrigins[${index}]`, MAX_CORS_ORIGIN_LENGTH));
        try {
            change.corsOrigins = canonicalCorsOrigins(texts);
        } catch (error) {
            throw bad(`"corsOrigins": ${(error as Error).message.replace(/\.$/, "")}`);
        }
    }
    for (const key of ["addClientKey", "revokeClientKey"] as const)
        if (fields[key] != null) {
            const name = string(fields, key, TEXT_LIMITS.clientKeyName);
            if (!CLIENT_KEY_NAME_PATTERN.test(name))
                throw bad(`"${key}" must be a name of 1 to 40 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit`);
            change[key] = name;
        }
    if (fields.bindAddress != null) {
        const address = string(fields, "bindAddress", TEXT_LIMITS.host);
        if (address !== "localhost" && isIP(address) === 0)
            throw bad(`"bindAddress" must be an IP address such as 127.0.0.1 or 0.0.0.0, or localhost (got ${JSON.stringify(address.slice(0, 40))})`);
        change.bindAddress = address;
    }
    return change;
}

/** `{endpoint: "host:port"}` by parseRpcEndpoint's rules, written back in its canonical form. */
function rpcEndpoint(arg: unknown): {endpoint: string} {
    const endpoint = string(object(arg, ["endpoint"]), "endpoint", TEXT_LIMITS.rpcEndpoint);
    try {
        return {endpoint: parseRpcEndpoint(endpoint).text};
    } catch (error) {
        throw bad((error as Error).message);
    }
}

/** Requests without an argument: web mode sends `null`, Electron `undefined`; anything else is a client bug. */
function none(arg: unknown): undefined {
    if (arg != null)
        throw bad("the request takes no argument");
    return undefined;
}

/** One check per request, each returning exactly its contract argument type. */
type Checks = {[Name in RequestName]: (arg: unknown) => RequestArg<Name>};

const checks: Checks = {
    "machine.describe": none,
    "engine.state": none,
    "engine.restart": none,
    "model.unload": none,
    "model.current": none,
    "model.makeDemo": none,
    "conversations.list": none,
    "conversations.notices": none,
    "dialog.openModel": none,
    "bench.list": none,
    "server.get": none,
    "server.set": serverChange,
    "rpc.list": none,
    "rpc.add": rpcEndpoint,
    "rpc.remove": rpcEndpoint,
    "library.list": none,
    "library.files": none,
    "library.load": (arg) => {
        const fields = object(arg, ["path", "taskId"]);
        return {path: string(fields, "path", TEXT_LIMITS.path), taskId: string(fields, "taskId", TEXT_LIMITS.id)};
    },
    "library.forget": (arg) => ({path: string(object(arg, ["path"]), "path", TEXT_LIMITS.path)}),
    "hub.search": (arg) => ({query: string(object(arg, ["query"]), "query", HUB_QUERY_MAX_CHARS)}),
    "hub.quants": (arg) => {
        const fields = object(arg, ["repo", "profile", "taskId"]);
        const profile = fields.profile;
        if (typeof profile !== "boolean")
            throw bad(`"profile" must be true or false`);
        return {repo: repoId(fields), profile, taskId: string(fields, "taskId", TEXT_LIMITS.id)};
    },
    "hub.pull": (arg) => {
        const fields = object(arg, ["repo", "quant", "taskId"]);
        const quant = string(fields, "quant", 64);
        if (!/^[A-Za-z0-9_.-]+$/.test(quant))
            throw bad(`"quant" must be a quant name such as Q4_K_M (letters, digits, _ . -)`);
        return {repo: repoId(fields), quant, taskId: string(fields, "taskId", TEXT_LIMITS.id)};
    },
    "model.inspect": (arg) => ({path: string(object(arg, ["path"]), "path", TEXT_LIMITS.path)}),
    "model.autoOffload": (arg) => {
        const fields = object(arg, ["path", "budget", "settings", "strategy", "taskId", "refreshProfile", "speculative", "llamaCommand"]);
        if (fields.strategy != null && !isPlacementStrategy(fields.strategy))
            throw bad(`"strategy" must be one of ${PLACEMENT_STRATEGIES.join(", ")}`);
        if (fields.strategy === "command" && fields.llamaCommand == null)
            throw bad(`"strategy": "command" needs "llamaCommand": the command to load`);
        const refreshProfile = boolean(fields, "refreshProfile");
        return {
            path: string(fields, "path", TEXT_LIMITS.path), budget: budget(fields.budget), settings: settings(fields.settings),
            ...(fields.strategy != null && {strategy: fields.strategy as RequestArg<"model.autoOffload">["strategy"]}),
            taskId: string(fields, "taskId", TEXT_LIMITS.id),
            ...(refreshProfile != null && {refreshProfile}),
            ...(fields.speculative != null && {speculative: speculative(fields.speculative)}),
            ...(fields.llamaCommand != null && {llamaCommand: llamaCommand(fields.llamaCommand)})
        };
    },
    "task.cancel": (arg) => ({taskId: string(object(arg, ["taskId"]), "taskId", TEXT_LIMITS.id)}),
    "model.load": (arg) => {
        const fields = object(arg, ["path", "gpuLayers", "settings", "taskId", "speculative"]);
        return {
            path: string(fields, "path", TEXT_LIMITS.path),
            gpuLayers: fields.gpuLayers === "max" ? "max" : number(fields, "gpuLayers", "gpuLayers"),
            settings: settings(fields.settings), taskId: string(fields, "taskId", TEXT_LIMITS.id),
            ...(fields.speculative != null && {speculative: speculative(fields.speculative)})
        };
    },
    "conversations.get": (arg) => ({id: string(object(arg, ["id"]), "id", TEXT_LIMITS.id)}),
    "conversations.delete": (arg) => ({id: string(object(arg, ["id"]), "id", TEXT_LIMITS.id)}),
    "conversations.create": (arg) => {
        const fields = object(arg ?? {}, ["title", "settings"]);
        const title = optionalString(fields, "title", TEXT_LIMITS.title);
        return {...(title != null && {title}), ...(fields.settings != null && {settings: chatSettings(fields.settings)})};
    },
    "conversations.export": (arg) => {
        const fields = object(arg, ["id", "format"]);
        if (!isConversationExportFormat(fields.format))
            throw bad(`"format" must be one of ${CONVERSATION_EXPORT_FORMATS.join(", ")}`);
        return {id: string(fields, "id", TEXT_LIMITS.id), format: fields.format};
    },
    "conversations.import": (arg) => ({text: string(object(arg, ["text"]), "text", CONVERSATION_IMPORT_MAX_CHARS)}),
    "conversations.search": (arg) => {
        const query = string(object(arg, ["query"]), "query", SEARCH_QUERY_MAX_CHARS);
        if (query.trim() === "")
            throw bad("the search is empty");
        return {query};
    },
    "conversations.rename": (arg) => {
        const fields = object(arg, ["id", "title"]);
        return {id: string(fields, "id", TEXT_LIMITS.id), title: string(fields, "title", TEXT_LIMITS.title)};
    },
    "chat.send": (arg) => {
        const fields = object(arg, ["conversationId", "text", "streamId", "maxTokens", "temperature"]);
        const text = string(fields, "text", TEXT_LIMITS.message);
        if (text.trim() === "")
            throw bad("the message is empty");
        return {
            conversationId: string(fields, "conversationId", TEXT_LIMITS.id), text,
            streamId: string(fields, "streamId", TEXT_LIMITS.id), ...replyOptions(fields)
        };
    },
    "chat.regenerate": (arg) => {
        const fields = object(arg, ["conversationId", "streamId", "maxTokens", "temperature"]);
        return {
            conversationId: string(fields, "conversationId", TEXT_LIMITS.id), streamId: string(fields, "streamId", TEXT_LIMITS.id),
            ...replyOptions(fields)
        };
    },
    "conversations.setSettings": (arg) => {
        const fields = object(arg, ["id", "settings"]);
        return {id: string(fields, "id", TEXT_LIMITS.id), settings: chatSettings(fields.settings)};
    },
    "conversations.deleteMessage": (arg) => {
        const fields = object(arg, ["id", "messageId"]);
        return {id: string(fields, "id", TEXT_LIMITS.id), messageId: string(fields, "messageId", TEXT_LIMITS.id)};
    },
    "chat.edit": (arg) => {
        const fields = object(arg, ["conversationId", "messageId", "text", "streamId"]);
        const text = string(fields, "text", TEXT_LIMITS.message);
        if (text.trim() === "")
            throw bad("the message is empty");
        return {
            conversationId: string(fields, "conversationId", TEXT_LIMITS.id), messageId: string(fields, "messageId", TEXT_LIMITS.id),
            text, streamId: string(fields, "streamId", TEXT_LIMITS.id)
        };
    },
    "chat.stop": (arg) => ({streamId: string(object(arg, ["streamId"]), "streamId", TEXT_LIMITS.id)}),
    "bench.start": (arg): BenchStartRequest => {
        const fields = object(arg, ["benchId", "path", "budgets", "promptLengths", "genLengths", "strategies", "repeats", "handTuned"]);
        const handTuned = boolean(fields, "handTuned");
        const path = fields.path == null ? undefined : string(fields, "path", TEXT_LIMITS.path);
        return {
            benchId: string(fields, "benchId", TEXT_LIMITS.id),
            ...(path != null && {path}),
            budgets: list(fields, "budgets", "budgets", fixedBudget),
            promptLengths: lengths(fields, "promptLengths", "benchPromptTokens"),
            genLengths: lengths(fields, "genLengths", "benchGenTokens"),
            strategies: list(fields, "strategies", "strategies", (item) => {
                if (!isStrategyName(item))
                    throw bad(`unknown strategies: ${String(item).slice(0, 40)} (known: ${STRATEGY_NAMES.join(", ")})`);
                return item;
            }),
            repeats: number(fields, "repeats", "repeats"),
            ...(handTuned != null && {handTuned})
        };
    },
    "bench.stop": (arg) => ({benchId: string(object(arg, ["benchId"]), "benchId", TEXT_LIMITS.id)}),
    "bench.get": (arg) => ({id: string(object(arg, ["id"]), "id", TEXT_LIMITS.id)}),
    "bench.export": (arg) => {
        const fields = object(arg, ["id", "format"]);
        return {id: string(fields, "id", TEXT_LIMITS.id), format: exportFormat(fields)};
    },
    "dialog.saveBenchReport": (arg) => {
        const fields = object(arg, ["id", "format"]);
        return {id: string(fields, "id", TEXT_LIMITS.id), format: exportFormat(fields)};
    },
    "chat.decideTool": (arg) => {
        const fields = object(arg, ["streamId", "callId", "decision"]);
        if (!isToolDecision(fields.decision))
            throw bad(`"decision" must be one of ${TOOL_DECISIONS.join(", ")}`);
        return {streamId: string(fields, "streamId", TEXT_LIMITS.id), callId: string(fields, "callId", TEXT_LIMITS.toolCallId), decision: fields.decision};
    },
    "tools.list": none,
    "tools.save": (arg) => {
        const fields = object(arg, ["config", "replaces"]);
        return {config: checkMcpServerConfig(fields.config), ...(fields.replaces != null && {replaces: serverName(fields, "replaces")})};
    },
    "tools.remove": (arg) => ({name: serverName(object(arg, ["name"]), "name")}),
    "tools.start": (arg) => ({name: serverName(object(arg, ["name"]), "name")}),
    "tools.stop": (arg) => ({name: serverName(object(arg, ["name"]), "name")}),
    "tools.import": (arg) => ({text: string(object(arg, ["text"]), "text", TEXT_LIMITS.mcpImport)})
};

/** `arg` checked as the argument of request `name`; throws a `bad-request` {@link TensorwiseError} otherwise. */
export function checkRequest<Name extends RequestName>(name: Name, arg: unknown): RequestArg<Name> {
    const check = checks[name] as ((arg: unknown) => RequestArg<Name>) | undefined;
    if (check == null)
        throw new TensorwiseError("unknown-request", `unknown request "${String(name).slice(0, 60)}"`);
    return check(arg);
}
