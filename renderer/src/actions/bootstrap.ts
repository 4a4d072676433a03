import {useChatStore} from "../stores/chatStore";
import {useEngineStore} from "../stores/engineStore";
import {initTransport} from "../transport/getTransport";
import {refreshBenchList} from "./benchActions";
import {openConversation, refreshConversations} from "./chatActions";
import {refreshLoaded, refreshMachine} from "./engineActions";
import {wireEvents} from "./wireEvents";

/** Picks the transport, subscribes the stores to events, then loads the first state. */
export function bootstrap(): void {
    const transport = initTransport();
    wireEvents(transport);
    void (async () => {
        useEngineStore.getState().setEngine(await transport.request("engine.state"));
        await refreshConversations();
        const first = useChatStore.getState().summaries[0];
        if (first != null)
            await openConversation(first.id);
        await Promise.all([refreshMachine(), refreshLoaded(), refreshBenchList()]);
    })();
}
