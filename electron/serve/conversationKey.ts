import {createHash} from "node:crypto";
import {OpenAiError} from "./OpenAiError.js";
import type {GenerationRequest} from "./parseGenerationRequest.js";

/** The request header that names a conversation explicitly. */
export const CONVERSATION_HEADER = "x-conversation-id";
const MAX_HEADER_CHARS = 200;

/**
 * Which conversation a request continues, as a short id (16 hex digits of a SHA-256):
 * - the `X-Conversation-Id` header when the client sends one (any 1–200 visible ASCII characters), for either endpoint;
 * - else, for a chat, its messages up to and including the first user message: every later turn of a chat repeats
 *   them, so the turns of one chat share the id without the client doing anything;
 * - else (a text completion without the header) none.
 *
 * Two chats that open with the same messages share a derived id. That costs speed, never correctness: a restored
 * state is only reused as far as its tokens match the new prompt (node-llama-cpp's sequence keeps the common prefix
 * and evaluates the rest).
 */
export function conversationKey(request: GenerationRequest, header: string | string[] | undefined): string | null {
    if (header != null) {
        const value = Array.isArray(header) ? header[0] ?? "" : header;
        if (!/^[\x21-\x7e]{1,200}$/.test(value))
            throw OpenAiError.badRequest(`The X-Conversation-Id header must be 1 to ${MAX_HEADER_CHARS} visible ASCII characters (no spaces).`);
        return shortHash(`header\n${value}`);
    }
    if (request.kind !== "chat")
        return null;
    const firstUser = request.messages.findIndex((message) => message.role === "user");
    return shortHash(`messages\n${JSON.stringify(request.messages.slice(0, firstUser + 1))}`);
}

function shortHash(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
