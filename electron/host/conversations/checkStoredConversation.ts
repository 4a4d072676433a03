/**
 * A conversation file read from disk is input like any request: it may have been hand-edited, half-restored from a
 * backup, or written by another program. This checks it with the request checks of electron/host/checkRequest.ts
 * (the same field rules, the same settings check as `conversations.setSettings`) and returns it as the contract's
 * {@link Conversation}, or throws a `bad-request` TensorwiseError naming the first wrong field.
 */
import type {ChatMessage, Conversation} from "../../contract/ipc.js";
import {LIMITS, TEXT_LIMITS} from "../../contract/limits.js";
import {
    MCP_SERVER_NAME_PATTERN, MCP_TOOL_NAME_CHARS, TOOL_CALL_STATES, TOOL_IMAGE_MAX_CHARS, TOOL_IMAGE_TYPES, TOOL_RESULT_IMAGES, TOOL_RESULT_KEPT_CHARS,
    type ToolCallRecord, type ToolResult, type ToolResultPart
} from "../../contract/tools.js";
import {SPECULATIVE_KINDS} from "../../contract/speculative.js";
import {bad, chatSettings, object, string, type Fields} from "../checkRequest.js";

const CONVERSATION_FIELDS = ["id", "title", "updatedAt", "messageCount", "messages", "settings"] as const;
const MESSAGE_FIELDS = [
    "id", "role", "text", "createdAt", "timing", "stopped", "stopReason", "prompt", "context", "restore", "model", "leftOutMessages", "toolCalls", "toolTokens", "speculative"
] as const;
const CALL_FIELDS = ["id", "server", "tool", "arguments", "state", "approval", "result", "error", "ms"] as const;
/** The most characters of a call's error, or of a note in its result. */
const SENTENCE_CHARS = 2_000;
/** The most parts one result keeps. */
const RESULT_PARTS = 64;
const STOP_REASONS = ["done", "max-tokens", "stop-string", "stopped"] as const;
const STOPPED = ["user", "crash"] as const;
const RESTORE_PATHS = ["resident", "new", "swap", "recompute"] as const;

/** `fields[key]` as a finite number ≥ 0 (a time, a count or a timestamp). */
function amount(fields: Fields, key: string, what: string): number {
    const value = fields[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
        throw bad(`${what}"${key}" must be a number of at least 0`);
    return value;
}

function oneOf<T extends string>(fields: Fields, key: string, allowed: readonly T[], what: string): T {
    const value = fields[key];
    if (!allowed.includes(value as T))
        throw bad(`${what}"${key}" must be one of ${allowed.join(", ")}`);
    return value as T;
}

/** `fields[key]` as an object of exactly the listed keys, each a number ≥ 0. */
function amounts<K extends string>(fields: Fields, key: string, keys: readonly K[], what: string): Record<K, number> {
    const inner = object(fields[key], keys, `${what}"${key}"`);
    return Object.fromEntries(keys.map((name) => [name, amount(inner, name, `${what}${key}.`)])) as Record<K, number>;
}

function resultPart(value: unknown, what: string): ToolResultPart {
    const fields = object(value, ["type", "text", "mimeType", "data"], what);
    if (fields.type === "text" || fields.type === "note") {
        object(value, ["type", "text"], what);
        return {type: fields.type, text: string(fields, "text", fields.type === "text" ? TOOL_RESULT_KEPT_CHARS : SENTENCE_CHARS, {allowEmpty: true})};
    }
    if (fields.type === "image") {
        // what a conversation file shows as an image is only ever a raster type, as base64 (never markup, never a URL)
        const mimeType = oneOf(fields, "mimeType", TOOL_IMAGE_TYPES, `${what}: `);
        const data = string(fields, "data", TOOL_IMAGE_MAX_CHARS);
        if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data))
            throw bad(`${what}: "data" must be base64`);
        return {type: "image", mimeType, data};
    }
    throw bad(`${what}: "type" must be text, image or note`);
}

function toolResult(value: unknown, what: string): ToolResult {
    const fields = object(value, ["isError", "parts", "structured", "capped"], what);
    if (typeof fields.isError !== "boolean")
        throw bad(`${what}: "isError" must be true or false`);
    if (!Array.isArray(fields.parts) || fields.parts.length > RESULT_PARTS)
        throw bad(`${what}: "parts" must be a list of at most ${RESULT_PARTS} parts`);
    const parts = fields.parts.map((part, index) => resultPart(part, `${what} part ${index + 1}`));
    if (parts.filter((part) => part.type === "image").length > TOOL_RESULT_IMAGES)
        throw bad(`${what} has more than ${TOOL_RESULT_IMAGES} images`);
    const structured = fields.structured == null ? null : string(fields, "structured", TOOL_RESULT_KEPT_CHARS, {allowEmpty: true});
    const textChars = parts.reduce((sum, part) => sum + (part.type === "text" ? part.text.length : 0), structured?.length ?? 0);
    if (textChars > TOOL_RESULT_KEPT_CHARS)
        throw bad(`${what} has more than ${TOOL_RESULT_KEPT_CHARS} characters of text`);
    return {isError: fields.isError, parts, structured, capped: fields.capped == null ? null : string(fields, "capped", SENTENCE_CHARS)};
}

function toolCall(value: unknown, what: string): ToolCallRecord {
    const fields = object(value, CALL_FIELDS, what);
    const server = string(fields, "server", 64, {allowEmpty: true});
    // "" only for a call of a tool the chat did not offer (it never ran)
    if (server !== "" && !MCP_SERVER_NAME_PATTERN.test(server))
        throw bad(`${what}: "server" is not a server's name`);
    const state = oneOf(fields, "state", TOOL_CALL_STATES, `${what}: `);
    const call: ToolCallRecord = {
        id: string(fields, "id", TEXT_LIMITS.toolCallId), server, tool: string(fields, "tool", MCP_TOOL_NAME_CHARS),
        arguments: string(fields, "arguments", TEXT_LIMITS.toolArguments, {allowEmpty: true}), state
    };
    if (fields.approval != null)
        call.approval = oneOf(fields, "approval", ["user", "always"] as const, `${what}: `);
    if (fields.result != null) {
        if (state !== "done")
            throw bad(`${what}: only a call that is "done" has a "result"`);
        call.result = toolResult(fields.result, `${what}'s result`);
    }
    if (fields.error != null)
        call.error = string(fields, "error", SENTENCE_CHARS);
    if (fields.ms != null)
        call.ms = amount(fields, "ms", `${what}: `);
    return call;
}

/** A reply's tool calls: at most {@link LIMITS.toolCallCount}, with distinct ids. */
function toolCalls(value: unknown, what: string): ToolCallRecord[] {
    if (!Array.isArray(value) || !Number.isSafeInteger(value.length) || value.length > LIMITS.toolCallCount.max)
        throw bad(`${what}"toolCalls" must be a list of at most ${LIMITS.toolCallCount.max} calls`);
    const calls = value.map((call, index) => toolCall(call, `${what}tool call ${index + 1}`));
    if (new Set(calls.map((call) => call.id)).size !== calls.length)
        throw bad(`${what}two tool calls have one id`);
    return calls;
}

function message(value: unknown, index: number): ChatMessage {
    const what = `message ${index + 1}: `;
    const fields = object(value, MESSAGE_FIELDS, `message ${index + 1}`);
    const role = oneOf(fields, "role", ["user", "assistant"] as const, what);
    // the user's own text has the request's limit; a reply is as long as the model made it
    const text = fields.text;
    if (typeof text !== "string" || (role === "user" && text.length > TEXT_LIMITS.message))
        throw bad(`${what}"text" must be a string${role === "user" ? ` of at most ${TEXT_LIMITS.message} characters` : ""}`);
    const checked: ChatMessage = {
        id: string(fields, "id", TEXT_LIMITS.id), role, text, createdAt: amount(fields, "createdAt", what)
    };
    if (fields.model != null)
        checked.model = string(fields, "model", TEXT_LIMITS.path);
    if (fields.stopped != null)
        checked.stopped = oneOf(fields, "stopped", STOPPED, what);
    if (fields.stopReason != null)
        checked.stopReason = oneOf(fields, "stopReason", STOP_REASONS, what);
    if (fields.timing != null) {
        const timing = object(fields.timing, ["promptTokens", "generatedTokens", "ttftMs", "tpotMs", "totalMs", "predicted"], `${what}"timing"`);
        const at = `${what}timing.`;
        checked.timing = {
            promptTokens: amount(timing, "promptTokens", at), generatedTokens: amount(timing, "generatedTokens", at),
            ttftMs: amount(timing, "ttftMs", at), tpotMs: timing.tpotMs === null ? null : amount(timing, "tpotMs", at),
            totalMs: amount(timing, "totalMs", at),
            ...(timing.predicted != null && {predicted: amounts(timing, "predicted", ["ttftMs", "tpotMs"] as const, at)})
        };
    }
    if (fields.prompt != null)
        checked.prompt = amounts(fields, "prompt", ["tokens", "reused"] as const, what);
    if (fields.context != null)
        checked.context = amounts(fields, "context", ["usedTokens", "size"] as const, what);
    if (fields.leftOutMessages != null) {
        const count = fields.leftOutMessages;
        if (role !== "assistant")
            throw bad(`${what}"leftOutMessages" belongs to replies only`);
        // a reply's own question is never left out of its prompt
        if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 1 || count > index - 1)
            throw bad(`${what}"leftOutMessages" must be a whole number from 1 to the number of messages before its question`);
        checked.leftOutMessages = count;
    }
    if (fields.restore != null) {
        const restore = object(fields.restore, ["path", "ms"], `${what}"restore"`);
        checked.restore = {path: oneOf(restore, "path", RESTORE_PATHS, `${what}restore.`), ms: amount(restore, "ms", `${what}restore.`)};
    }
    if (fields.toolCalls != null || fields.toolTokens != null) {
        if (role !== "assistant")
            throw bad(`${what}tool calls belong to replies only`);
        if (fields.toolCalls != null)
            checked.toolCalls = toolCalls(fields.toolCalls, what);
        if (fields.toolTokens != null)
            checked.toolTokens = amount(fields, "toolTokens", what);
    }
    if (fields.speculative != null) {
        if (role !== "assistant")
            throw bad(`${what}"speculative" belongs to replies only`);
        const spec = object(fields.speculative, ["kind", "drafted", "accepted"], `${what}"speculative"`);
        const counts = {drafted: amount(spec, "drafted", `${what}speculative.`), accepted: amount(spec, "accepted", `${what}speculative.`)};
        // a draft token is accepted at most once: more accepted than proposed is a file that lies
        if (!Number.isSafeInteger(counts.drafted) || !Number.isSafeInteger(counts.accepted) || counts.accepted > counts.drafted)
            throw bad(`${what}"speculative" must count whole draft tokens, no more accepted than drafted`);
        checked.speculative = {kind: oneOf(spec, "kind", SPECULATIVE_KINDS, `${what}speculative.`), ...counts};
    }
    return checked;
}

/** `value` (parsed from the file of conversation `id`) as a {@link Conversation}; throws a `bad-request` error otherwise. */
export function checkStoredConversation(value: unknown, id: string): Conversation {
    const fields = object(value, CONVERSATION_FIELDS, "the conversation");
    if (fields.id !== id)
        throw bad(`the conversation's "id" is not its file's name (${id})`);
    const messages = fields.messages;
    if (!Array.isArray(messages))
        throw bad('"messages" must be a list');
    const checked = messages.map(message);
    // an edit, a delete or a streamed reply names its message by id: two with one id would change the wrong one
    const ids = new Set<string>();
    for (const [index, {id: messageId}] of checked.entries()) {
        if (ids.has(messageId))
            throw bad(`message ${index + 1}: "id" ${JSON.stringify(messageId.slice(0, 40))} is used by an earlier message`);
        ids.add(messageId);
    }
    return {
        id, title: string(fields, "title", TEXT_LIMITS.title, {allowEmpty: true}), updatedAt: amount(fields, "updatedAt", ""),
        messageCount: checked.length, messages: checked,
        ...(fields.settings != null && {settings: chatSettings(fields.settings)})
    };
}
