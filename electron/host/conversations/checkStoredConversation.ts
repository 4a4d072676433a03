/**
 * A conversation file read from disk is input like any request: it may have been hand-edited, half-restored from a
 * backup, or written by another program. This checks it with the request checks of electron/host/checkRequest.ts
 * (the same field rules, the same settings check as `conversations.setSettings`) and returns it as the contract's
 * {@link Conversation}, or throws a `bad-request` TensorwiseError naming the first wrong field.
 */
import type {ChatMessage, Conversation} from "../../contract/ipc.js";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {SPECULATIVE_KINDS} from "../../contract/speculative.js";
import {bad, chatSettings, object, string, type Fields} from "../checkRequest.js";

const CONVERSATION_FIELDS = ["id", "title", "updatedAt", "messageCount", "messages", "settings"] as const;
const MESSAGE_FIELDS = ["id", "role", "text", "createdAt", "timing", "stopped", "stopReason", "prompt", "context", "restore", "model", "leftOutMessages", "speculative"] as const;
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
