import {create} from "zustand";
import type {ServerState} from "../../../electron/contract/ipc";

/** Mirror of the app's OpenAI-compatible server (`server.get`, then `server.state` events). */
export type ServerStore = {
    server: ServerState | null;
    /** The last refused change, in the host's words (cleared by the next accepted one). */
    error: string | null;
    setServer(server: ServerState): void;
    setError(error: string | null): void;
};

export const useServerStore = create<ServerStore>((set) => ({
    server: null,
    error: null,
    setServer: (server) => set({server}),
    setError: (error) => set({error})
}));
