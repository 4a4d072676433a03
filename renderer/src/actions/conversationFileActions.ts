/**
 * A conversation as a file (export to Markdown or JSON, import a JSON export) and the search over saved conversations.
 * Export and import use a download link and a file input, which work alike in a browser (web mode) and in Electron.
 */
import {CONVERSATION_IMPORT_MAX_CHARS, type ConversationExportFormat} from "../../../electron/contract/conversationFile";
import {useConversationListStore} from "../stores/conversationListStore";
import {getTransport} from "../transport/getTransport";
import {errorMessage} from "../transport/Transport";
import {openConversation, refreshConversations} from "./chatActions";

/** How long typing pauses before a search is sent. */
export const SEARCH_DEBOUNCE_MS = 150;

/** Saves `text` as a download named `fileName`. */
function downloadText(text: string, fileName: string, mimeType: string): void {
    const url = URL.createObjectURL(new Blob([text], {type: mimeType}));
    const link = document.createElement("a");
    link.href = url;
    link.download = fileName;
    link.rel = "noopener";
    document.body.append(link);
    link.click();
    link.remove();
    // the download has taken the data once the click is handled
    setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** Downloads conversation `id` as a Markdown or JSON file; resolves with the file name. */
export async function exportConversation(id: string, format: ConversationExportFormat): Promise<string> {
    const file = await getTransport().request("conversations.export", {id, format});
    downloadText(file.text, file.fileName, file.mimeType);
    return file.fileName;
}

/**
 * Imports a JSON export the user picked as a new conversation and shows it; a refusal (the host's sentence, or a file
 * too long to be one) is shown above the list and nothing changes.
 */
export async function importConversationFile(file: File): Promise<void> {
    const list = useConversationListStore.getState();
    list.setError(null);
    try {
        // a UTF-8 byte is at least a third of a character: a file this large cannot be within the limit
        if (file.size > 3 * CONVERSATION_IMPORT_MAX_CHARS)
            throw new Error(`This file cannot be imported: it is larger than a conversation export can be (${CONVERSATION_IMPORT_MAX_CHARS} characters).`);
        const conversation = await getTransport().request("conversations.import", {text: await file.text()});
        list.setQuery("");
        await refreshConversations();
        await openConversation(conversation.id);
    } catch (error) {
        useConversationListStore.getState().setError(errorMessage(error));
    }
}

/** Shows the conversations matching `query` (all of them when it is blank); an older search's late answer is dropped. */
export async function searchConversations(query: string): Promise<void> {
    const list = useConversationListStore.getState();
    if (query.trim() === "")
        return;
    try {
        const hits = await getTransport().request("conversations.search", {query});
        list.setHits(query, hits);
    } catch (error) {
        if (useConversationListStore.getState().query === query)
            list.setError(errorMessage(error));
    }
}
