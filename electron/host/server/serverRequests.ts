/** The Server screen's requests: read the app's OpenAI-compatible server state, and change its settings. */
import type {HostContext, RequestHandlers} from "../HostContext.js";

export function serverRequests(host: HostContext): RequestHandlers<"server.get" | "server.set"> {
    return {
        "server.get": async () => {
            await host.server.ready();
            return host.server.state;
        },
        "server.set": async (change) => await host.server.set(change)
    };
}
