import {create} from "zustand";
import type {ConversationSearchHit} from "../../../electron/contract/ipc";

/**
 * The sidebar's own state: the search typed (its hits from the host, `null` until they come) and the last import's
 * refusal. The conversations themselves are in chatStore.
 */
export type ConversationListStore = {
    query: string;
    hits: ConversationSearchHit[] | null;
    /** Why the search or the last import failed, in the host's sentence; null when it did not. */
    error: string | null;
    setQuery(query: string): void;
    /** The host's hits for `query`; dropped when the query changed meanwhile (an answer to an older search). */
    setHits(query: string, hits: ConversationSearchHit[]): void;
    setError(error: string | null): void;
};

export const useConversationListStore = create<ConversationListStore>((set) => ({
    query: "",
    hits: null,
    error: null,
    setQuery: (query) => set({query, hits: null, error: null}),
    setHits: (query, hits) => set((state) => state.query === query ? {hits} : {}),
    setError: (error) => set({error})
}));
