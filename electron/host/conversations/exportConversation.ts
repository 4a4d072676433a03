/**
 * One conversation as a file: Markdown for reading (title, the models that replied, the system prompt, then each turn
 * under its role's heading, every quoted text escaped by quotedMarkdown.ts so it can neither run HTML nor forge a
 * turn) or JSON for importing again (the conversation exactly as stored, wrapped with the
 * {@link CONVERSATION_FILE_FORMAT} and {@link CONVERSATION_FILE_VERSION} that importConversation.ts checks).
 */
import {
    CONVERSATION_FILE_FORMAT, CONVERSATION_FILE_VERSION, type ConversationExport, type ConversationExportFormat
} from "../../contract/conversationFile.js";
import type {ChatMessage, Conversation} from "../../contract/ipc.js";
import {toolCallText} from "../tools/toolCallText.js";
import {quotedInline, quotedMarkdown} from "./quotedMarkdown.js";

/** The most characters of the title a file name keeps. */
const FILE_NAME_CHARS = 60;

/** The title as a file name every system accepts: letters, digits, spaces, dots, dashes and underscores. */
export function exportFileName(title: string, format: ConversationExportFormat): string {
    const safe = title.normalize("NFC").replace(/[^\p{L}\p{N} ._-]+/gu, "-").replace(/\s+/g, " ")
        .replace(/^[\s.-]+|[\s.-]+$/g, "").slice(0, FILE_NAME_CHARS).trim();
    return `${safe === "" ? "conversation" : safe}.${format === "json" ? "json" : "md"}`;
}

/** What a reply's heading says besides its role: the model, and whether it was cut short. */
function replyNote(message: ChatMessage): string {
    const notes = [
        ...(message.model != null ? [quotedInline(message.model)] : []),
        ...(message.stopped === "user" ? ["stopped by the user"] : message.stopped === "crash" ? ["cut off: the engine stopped"] : [])
    ];
    return notes.length === 0 ? "" : ` (${notes.join(", ")})`;
}

/** `text` in a Markdown code fence longer than any run of backticks inside it. */
function fenced(text: string): string {
    const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
    const fence = "`".repeat(longest + 1);
    return `${fence}\n${text}\n${fence}`;
}

function toMarkdown(conversation: Conversation, exportedAt: Date): string {
    const models = [...new Set(conversation.messages.flatMap((message) => message.model != null ? [message.model] : []))];
    const lines = [
        `# ${quotedInline(conversation.title)}`, "",
        `- Model: ${models.length === 0 ? "not recorded" : models.map(quotedInline).join(", ")}`,
        `- Messages: ${conversation.messages.length}`,
        `- Exported: ${exportedAt.toISOString()}`,
        ""
    ];
    const systemPrompt = conversation.settings?.systemPrompt;
    if (systemPrompt != null && systemPrompt.trim() !== "")
        lines.push("## System prompt", "", quotedMarkdown(systemPrompt), "");
    for (const message of conversation.messages) {
        const heading = message.role === "user" ? "## User" : `## Assistant${replyNote(message)}`;
        lines.push(heading, "", quotedMarkdown(message.text), "");
        for (const call of message.toolCalls ?? [])
            lines.push(`### Tool call: ${quotedInline(call.tool)}${call.server !== "" ? ` (${quotedInline(call.server)})` : ""}, ${call.state}`, "", fenced(call.arguments), "",
                ...(call.state === "done" || call.state === "failed" ? [fenced(toolCallText(call)), ""] : []));
    }
    return lines.join("\n");
}

/** `conversation` as a file of `format`. */
export function exportConversation(conversation: Conversation, format: ConversationExportFormat, exportedAt = new Date()): ConversationExport {
    const fileName = exportFileName(conversation.title, format);
    if (format === "markdown")
        return {fileName, mimeType: "text/markdown;charset=utf-8", text: toMarkdown(conversation, exportedAt)};
    const file = {format: CONVERSATION_FILE_FORMAT, version: CONVERSATION_FILE_VERSION, exportedAt: exportedAt.getTime(), conversation};
    return {fileName, mimeType: "application/json", text: `${JSON.stringify(file, null, 2)}\n`};
}
