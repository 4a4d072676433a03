import {useRpcStore} from "../stores/rpcStore";
import {errorMessage} from "../transport/Transport";
import {getTransport} from "../transport/getTransport";

/** Loads the rpc-servers (each probed again by the host) into their store. */
export async function refreshRpcServers(): Promise<void> {
    const store = useRpcStore.getState();
    try {
        store.setRpc(await getTransport().request("rpc.list"));
    } catch (error) {
        store.setError(errorMessage(error));
    }
}

/**
 * Adds (`"add"`) or removes an rpc-server; the host restarts the engine with the new list. Returns whether it was
 * accepted; a refused one leaves the list as it was and shows why.
 */
export async function changeRpcServers(change: "add" | "remove", endpoint: string): Promise<boolean> {
    const store = useRpcStore.getState();
    store.setChanging(true);
    try {
        store.setRpc(await getTransport().request(change === "add" ? "rpc.add" : "rpc.remove", {endpoint}));
        store.setError(null);
        return true;
    } catch (error) {
        store.setError(errorMessage(error));
        return false;
    } finally {
        store.setChanging(false);
    }
}
