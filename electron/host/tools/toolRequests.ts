/**
 * The Tools screen's requests: the MCP servers' list and state, adding, changing, removing, importing, starting and
 * stopping them (McpServers.ts). Each request is checked first (checkRequest.ts); a server is started only by `tools.start`
 * or by a reply whose tools need it.
 */
import type {HostContext, RequestHandlers} from "../HostContext.js";

type ToolRequestName = "tools.list" | "tools.save" | "tools.remove" | "tools.start" | "tools.stop" | "tools.import";

export function toolRequests(host: HostContext): RequestHandlers<ToolRequestName> {
    return {
        "tools.list": async () => await host.tools.state(),
        "tools.save": async ({config, replaces}) => await host.tools.save(config, replaces),
        "tools.remove": async ({name}) => await host.tools.remove(name),
        "tools.start": async ({name}) => await host.tools.start(name),
        "tools.stop": async ({name}) => await host.tools.stop(name),
        "tools.import": async ({text}) => await host.tools.import(text)
    };
}
