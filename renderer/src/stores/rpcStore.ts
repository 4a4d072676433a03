import {create} from "zustand";
import type {RpcServersState} from "../../../electron/contract/ipc";

/** Mirror of the rpc-servers the user added (`rpc.list`, then each `rpc.add` / `rpc.remove` reply). */
export type RpcStore = {
    rpc: RpcServersState | null;
    /** A change in flight (probing, restarting the engine): the list's buttons wait for it. */
    changing: boolean;
    /** The last refused change, in the host's words (cleared by the next accepted one). */
    error: string | null;
    setRpc(rpc: RpcServersState): void;
    setChanging(changing: boolean): void;
    setError(error: string | null): void;
};

export const useRpcStore = create<RpcStore>((set) => ({
    rpc: null,
    changing: false,
    error: null,
    setRpc: (rpc) => set({rpc}),
    setChanging: (changing) => set({changing}),
    setError: (error) => set({error})
}));
