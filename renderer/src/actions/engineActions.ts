import {useEngineStore} from "../stores/engineStore";
import {usePlanStore} from "../stores/planStore";
import {getTransport} from "../transport/getTransport";

export async function refreshMachine(): Promise<void> {
    try {
        useEngineStore.getState().setMachine(await getTransport().request("machine.describe"));
    } catch {
        // the engine is not up yet; engine.state will tell
    }
}

/** Brings the engine back after a crash; the host reloads the last model with the same placement. */
export async function restartEngine(): Promise<void> {
    const store = useEngineStore.getState();
    store.setRestarting(true);
    try {
        const version = useEngineStore.getState().engineVersion;
        const state = await getTransport().request("engine.restart");
        // engine.state events during the restart are at least as new as this answer
        if (useEngineStore.getState().engineVersion === version)
            store.setEngine(state);
        await refreshMachine();
    } finally {
        store.setRestarting(false);
    }
}

export async function refreshLoaded(): Promise<void> {
    try {
        usePlanStore.getState().setLoaded(await getTransport().request("model.current"));
    } catch {
        usePlanStore.getState().setLoaded(null);
    }
}
