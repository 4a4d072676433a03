import type {EventName, Events} from "../../contract/ipc.js";
import type {HostClient} from "../HostContext.js";

/** One event a host pushed to a client, with its name. */
export type ReceivedEvent = {[Name in EventName]: {name: Name; payload: Events[Name]}}[EventName];

/**
 * A host client for tests that keeps every event pushed to it, and `waitFor`, which resolves with the first kept event
 * of `name` that `match`es (polling every 20 ms) or throws after `timeout` ms.
 */
export function hostEventRecorder(id = "test-client", defaultTimeout = 60_000) {
    const events: ReceivedEvent[] = [];
    const client: HostClient = {id, emit: (name, payload) => events.push({name, payload} as ReceivedEvent)};
    const waitFor = async <Name extends EventName>(name: Name, match: (payload: Events[Name]) => boolean, timeout = defaultTimeout): Promise<Events[Name]> => {
        const started = Date.now();
        for (;;) {
            const found = events.find((event) => event.name === name && match(event.payload as Events[Name]));
            if (found != null)
                return found.payload as Events[Name];
            if (Date.now() - started > timeout)
                throw new Error(`no matching ${name} event within ${timeout} ms`);
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
    };
    return {events, client, waitFor};
}
