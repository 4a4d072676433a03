import {useEngineStore} from "../stores/engineStore";
import {initTransport} from "../transport/getTransport";
import {refreshBenchList} from "./benchActions";
import {openNewestConversation, refreshConversations} from "./chatActions";
import {refreshLoaded, refreshMachine} from "./engineActions";
import {refreshLibrary} from "./modelActions";
import {wireEvents} from "./wireEvents";

/** Picks the transport, subscribes the stores to events, then loads the first state. */
export function bootstrap(): void {
    const transport = initTransport();
    wireEvents(transport);
    void (async () => {
        // an engine.state event that arrives while this request is in flight is newer than its answer
        const version = useEngineStore.getState().engineVersion;
        const state = await transport.request("engine.state");
        if (useEngineStore.getState().engineVersion === version)
            useEngineStore.getState().setEngine(state);
        await refreshConversations();
        await openNewestConversation();
        await Promise.all([refreshMachine(), refreshLoaded(), refreshBenchList(), refreshLibrary()]);
    })();
}
