import {create} from "zustand";
import type {ToolServersState} from "../../../electron/contract/ipc";

/** Mirror of the MCP servers (`tools.list`, then `tools.state` events), and the last refusal of a change. */
export type ToolsStore = {
    state: ToolServersState | null;
    /** The last refused change or import, in the host's words (cleared by the next accepted one). */
    error: string | null;
    setState(state: ToolServersState): void;
    setError(error: string | null): void;
};

export const useToolsStore = create<ToolsStore>((set) => ({
    state: null,
    error: null,
    setState: (state) => set({state}),
    setError: (error) => set({error})
}));
