/**
 * Remembers on this machine (localStorage) the conversation being opened until the page has shown it (Chat.tsx marks
 * it shown once its messages are committed). A mark still there at the next start means the page stopped while showing
 * that conversation (it froze and was reloaded, or its renderer died): the newest conversation, which the app opens by
 * itself at start (bootstrap.ts), is then not opened if it is that one, so one conversation cannot stop the app at
 * every start. The user can still open it from the list.
 */
const KEY = "tensorwise.openingConversation";

function storage(): Storage | null {
    try {
        return globalThis.localStorage ?? null;
    } catch {
        return null;
    }
}

/** Marks `id` as being opened; call before its messages are put in the store. */
export function markOpening(id: string): void {
    storage()?.setItem(KEY, id);
}

/** Marks `id` as shown: the page rendered its messages. */
export function markShown(id: string): void {
    const store = storage();
    if (store?.getItem(KEY) === id)
        store.removeItem(KEY);
}

/** The conversation the page was still showing when it last stopped, if any. */
export function unfinishedOpening(): string | null {
    return storage()?.getItem(KEY) ?? null;
}
