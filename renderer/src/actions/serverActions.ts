import type {ServerChange} from "../../../electron/contract/ipc";
import {useServerStore} from "../stores/serverStore";
import {errorMessage} from "../transport/Transport";
import {getTransport} from "../transport/getTransport";

/** Loads the server's state into its store. */
export async function refreshServer(): Promise<void> {
    useServerStore.getState().setServer(await getTransport().request("server.get"));
}

/** Sends a change from the Server screen; a refused one leaves the settings as they were and shows why. */
export async function changeServer(change: ServerChange): Promise<void> {
    const store = useServerStore.getState();
    try {
        store.setServer(await getTransport().request("server.set", change));
        store.setError(null);
    } catch (error) {
        store.setError(errorMessage(error));
    }
}
