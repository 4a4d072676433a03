/**
 * Search over the saved conversations, in the host: the renderer holds only the conversations it has opened, while
 * the host reads every file at start anyway (ConversationStore's load) and sees every write. So the host keeps the
 * searchable text of each conversation (its title and message texts, about the size of the files) in memory and a
 * search is one scan of it, with no file read — a few milliseconds for hundreds of conversations.
 */
import type {ConversationSearchHit, SearchMatch} from "../../contract/conversationFile.js";
import type {Conversation, ConversationSummary} from "../../contract/ipc.js";

/** Characters of message text shown before and after a match (the sidebar shows about 40 in one line). */
const CONTEXT_BEFORE = 20;
const CONTEXT_AFTER = 80;

type Searchable = {title: string; messages: {id: string; role: "user" | "assistant"; text: string}[]};

/**
 * `text` with the characters a regular expression treats specially escaped, so the user's query matches literally.
 * Written here because Node 20 has no RegExp.escape; the character class is MDN's ("Regular expressions", Escaping).
 */
function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A one-line slice of `text` around the match at `at` (length `length`). */
function around(text: string, at: number, length: number): {before: string; match: string; after: string} {
    const start = Math.max(0, at - CONTEXT_BEFORE);
    const end = Math.min(text.length, at + length + CONTEXT_AFTER);
    const oneLine = (part: string) => part.replace(/\s+/g, " ");
    // a cut-off word at the start is left out
    const lead = start > 0 ? text.slice(start, at).replace(/^\S*\s(?=.)/su, "") : text.slice(start, at);
    return {
        before: (start > 0 ? "…" : "") + oneLine(lead).trimStart(),
        match: oneLine(text.slice(at, at + length)),
        after: oneLine(text.slice(at + length, end)).trimEnd() + (end < text.length ? "…" : "")
    };
}

export class ConversationSearch {
    private readonly entries = new Map<string, Searchable>();

    /** Records the conversation's current title and messages (after every write of it). */
    put(conversation: Conversation): void {
        this.entries.set(conversation.id, {
            title: conversation.title,
            messages: conversation.messages.map(({id, role, text}) => ({id, role, text}))
        });
    }

    remove(id: string): void {
        this.entries.delete(id);
    }

    /**
     * The conversations of `summaries` (kept in their order) whose title or a message contains `query`, ignoring case
     * (Unicode simple case folding: the `iu` flags); the title first, else the first message that matches.
     */
    search(query: string, summaries: ConversationSummary[]): ConversationSearchHit[] {
        const pattern = new RegExp(escapeRegExp(query), "iu");
        const hits: ConversationSearchHit[] = [];
        for (const summary of summaries) {
            const entry = this.entries.get(summary.id);
            if (entry == null)
                continue;
            const match = this.matchIn(entry, pattern);
            if (match != null)
                hits.push({...summary, match});
        }
        return hits;
    }

    private matchIn(entry: Searchable, pattern: RegExp): SearchMatch | null {
        if (pattern.test(entry.title))
            return {in: "title"};
        for (const message of entry.messages) {
            const found = pattern.exec(message.text);
            if (found != null)
                return {in: "message", messageId: message.id, role: message.role, ...around(message.text, found.index, found[0].length)};
        }
        return null;
    }
}
