import {createHash} from "node:crypto";
import {OpenAiError} from "./OpenAiError.js";
import type {GenerationRequest} from "./GenerationRequest.js";

/** The request header that names a conversation explicitly. */
export const CONVERSATION_HEADER = "x-conversation-id";
const MAX_HEADER_CHARS = 200;

/**
 * Whose conversations a request may reach: one tenant per API key (apiKeys.ts), {@link OPEN_TENANT} for every client
 * of a server without keys, {@link APP_TENANT} for the app's own chat. A conversation's KV cache is only ever reused by
 * requests of the same tenant, because every conversation id below is derived from the tenant.
 */
export type Tenant = string & {readonly __tenant: unique symbol};

/** Every client of a server without API keys (they cannot be told apart: loopback only, see serveOpenAi.ts). */
export const OPEN_TENANT = "open" as Tenant;
/** The app's own chat while the Server screen is on. */
export const APP_TENANT = "app" as Tenant;

/** The tenant of one API key: a hash, so the key itself is kept nowhere but in the key list. */
export function keyTenant(key: string): Tenant {
    return `key:${shortHash(`api-key\n${key}`)}` as Tenant;
}

/**
 * Which conversation a request continues, as a short id (16 hex digits of a SHA-256 over the tenant and the name):
 * - the `X-Conversation-Id` header when the client sends one (one header of 1–200 visible ASCII characters), for
 *   either endpoint;
 * - else, for a chat, its messages up to and including the first user message: every later turn of a chat repeats
 *   them, so the turns of one chat share the id without the client doing anything;
 * - else (a text completion without the header) none.
 *
 * The same header or the same opening messages from another tenant name another conversation: a client cannot reach
 * another key's KV cache by naming its conversation. Two chats of one tenant that open with the same messages share a
 * derived id; that costs speed, never correctness: a restored state is only reused as far as its tokens match the new
 * prompt (node-llama-cpp's sequence keeps the common prefix and evaluates the rest).
 */
export function conversationKey(tenant: Tenant, request: GenerationRequest, header: string | string[] | undefined): string | null {
    if (header != null) {
        // node joins repeated X-Conversation-Id headers with ", " (a space, so refused below); an array only comes from a caller
        if (Array.isArray(header) || !/^[\x21-\x7e]{1,200}$/.test(header))
            throw OpenAiError.badRequest(`The X-Conversation-Id header must be sent once, as 1 to ${MAX_HEADER_CHARS} visible ASCII characters (no spaces).`,
                null, "invalid_conversation_id");
        return namedConversationKey(tenant, header);
    }
    if (request.kind !== "chat")
        return null;
    const firstUser = request.messages.findIndex((message) => message.role === "user");
    return shortHash(`${tenant}\nmessages\n${JSON.stringify(request.messages.slice(0, firstUser + 1))}`);
}

/** The id of the conversation `tenant` calls `name` (the app's conversation ids; an API client's X-Conversation-Id). */
export function namedConversationKey(tenant: Tenant, name: string): string {
    return shortHash(`${tenant}\nheader\n${name}`);
}

function shortHash(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
