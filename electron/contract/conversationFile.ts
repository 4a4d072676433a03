/**
 * A conversation as a file the user keeps: exported as Markdown (to read) or JSON (to import again), and the search
 * over saved conversations. A leaf like the rest of electron/contract: the host and the renderer both import it.
 */
import type {ConversationSummary} from "./ipc.js";

/** The formats one conversation exports to. */
export const CONVERSATION_EXPORT_FORMATS = ["markdown", "json"] as const;
export type ConversationExportFormat = (typeof CONVERSATION_EXPORT_FORMATS)[number];

export function isConversationExportFormat(value: unknown): value is ConversationExportFormat {
    return CONVERSATION_EXPORT_FORMATS.includes(value as ConversationExportFormat);
}

/** The `format` field of a JSON export: says what the file is before anything else is read. */
export const CONVERSATION_FILE_FORMAT = "tensorwise.conversation";
/**
 * The `version` of the JSON export this app writes and the only one it imports. Raise it when the stored
 * conversation's fields change in a way an older app would misread.
 */
export const CONVERSATION_FILE_VERSION = 1;

/**
 * The most characters an imported file may have: well beyond a long chat (a few hundred turns of long replies), small
 * enough to parse and check at once. The web transport sizes its body limit for this request from it.
 */
export const CONVERSATION_IMPORT_MAX_CHARS = 8 * 1024 * 1024;

/** One exported conversation, ready to save: its contents, a file name and the MIME type of a download. */
export type ConversationExport = {fileName: string; mimeType: string; text: string};

/** The most characters a search may have. */
export const SEARCH_QUERY_MAX_CHARS = 200;

/**
 * Where a search matched a conversation: its title, or a message (the first that matches), with the text around the
 * match so the list can show it (`before` + `match` + `after` is a slice of that text).
 */
export type SearchMatch =
    | {in: "title"}
    | {in: "message"; messageId: string; role: "user" | "assistant"; before: string; match: string; after: string};

/** A conversation that matches a search, and where. */
export type ConversationSearchHit = ConversationSummary & {match: SearchMatch};
