/**
 * A conversation file the user chose to import: untrusted like a request. Its JSON is read whole, the wrapper's
 * format and version are checked, and the conversation inside goes through the very check a conversation file on
 * disk does (checkStoredConversation.ts). Any fault refuses the whole file with one sentence; nothing is stored.
 */
import {CONVERSATION_FILE_FORMAT, CONVERSATION_FILE_VERSION} from "../../contract/conversationFile.js";
import type {Conversation} from "../../contract/ipc.js";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {object, string} from "../checkRequest.js";
import {checkStoredConversation} from "./checkStoredConversation.js";

const FILE_FIELDS = ["format", "version", "exportedAt", "conversation"] as const;

function refuse(reason: string): TensorwiseError {
    return new TensorwiseError("bad-request", `This file cannot be imported: ${reason.replace(/\.$/, "")}.`);
}

/** The conversation in the text of a JSON export, checked; throws a `bad-request` error with one sentence otherwise. */
export function importConversation(text: string): Conversation {
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch (error) {
        throw refuse(/^\s*#/.test(text)
            ? "it is a Markdown export, which is for reading; import the JSON export of the conversation"
            : `it is not JSON (${(error as Error).message.slice(0, 120)})`);
    }
    if (parsed == null || typeof parsed !== "object" || Array.isArray(parsed))
        throw refuse('it is JSON but not a conversation export (an object with "format", "version" and "conversation")');
    try {
        const fields = object(parsed, FILE_FIELDS, "the file");
        if (fields.format !== CONVERSATION_FILE_FORMAT)
            throw refuse(`it is not a tensorwise conversation export ("format" must be "${CONVERSATION_FILE_FORMAT}")`);
        if (fields.version !== CONVERSATION_FILE_VERSION)
            throw refuse(`it is version ${fields.version === undefined ? "(none)" : JSON.stringify(fields.version).slice(0, 20)} of the conversation file, and this app reads version ${CONVERSATION_FILE_VERSION}`);
        if (fields.exportedAt != null && (typeof fields.exportedAt !== "number" || !Number.isFinite(fields.exportedAt) || fields.exportedAt < 0))
            throw refuse('"exportedAt" must be a time in ms since 1970');
        const conversation = fields.conversation;
        if (conversation == null || typeof conversation !== "object" || Array.isArray(conversation))
            throw refuse('"conversation" must be an object');
        // checked against itself here; the store gives the imported conversation a new id
        const id = string(conversation as Record<string, unknown>, "id", TEXT_LIMITS.id);
        return checkStoredConversation(conversation, id);
    } catch (error) {
        if (error instanceof TensorwiseError && !error.message.startsWith("This file cannot be imported"))
            throw refuse(error.message);
        throw error;
    }
}
