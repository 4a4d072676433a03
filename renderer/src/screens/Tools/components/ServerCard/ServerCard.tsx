import type {McpServerState} from "../../../../../../electron/contract/ipc";
import {removeServer, saveServer, startServer, stopServer} from "../../../../actions/toolActions";

const STATUS_TEXT: Record<McpServerState["status"], string> = {
    stopped: "Stopped", starting: "Starting…", running: "Running", failed: "Failed"
};

/** How the server is started or reached, in one line. */
function launchLine(server: McpServerState): string {
    const launch = server.config.launch;
    return launch.transport === "stdio" ? [launch.command, ...launch.args].join(" ") : launch.url;
}

/**
 * One MCP server: its state and why it failed, Start / Stop / Edit / Remove, enabled or not, the tools it lists with
 * their argument schemas, the tools that run without asking, and the tail of its log.
 */
export function ServerCard({server, onEdit}: {server: McpServerState; onEdit: () => void}) {
    const {config} = server;
    const running = server.status === "running" || server.status === "starting";
    return (
        <section className="panel stack tools-server" data-testid="tools-server" data-name={config.name} data-status={server.status}>
            <div className="row tools-server-head">
                <label className="row" title="A disabled server is never started">
                    <input type="checkbox" data-testid="tools-server-enabled" checked={config.enabled}
                        onChange={(event) => void saveServer({...config, enabled: event.target.checked}, config.name)}/>
                    <b className="tools-server-name">{config.name}</b>
                </label>
                <span className={`pill tools-status status-${server.status}`} data-testid="tools-server-status">{STATUS_TEXT[server.status]}</span>
                {server.pid != null && <span className="faint">pid {server.pid}</span>}
                {server.serverInfo != null && <span className="faint">{server.serverInfo}</span>}
                <span className="tools-server-actions row">
                    {running
                        ? <button className="button small" data-testid="tools-server-stop" onClick={() => void stopServer(config.name)}>Stop</button>
                        : <button className="button small" data-testid="tools-server-start" disabled={!config.enabled} onClick={() => void startServer(config.name)}>
                            {server.status === "failed" ? "Start again" : "Start"}</button>}
                    <button className="button small ghost" data-testid="tools-server-edit" onClick={onEdit}>Edit</button>
                    <button className="button small ghost danger" data-testid="tools-server-remove" onClick={() => void removeServer(config.name)}>Remove</button>
                </span>
            </div>
            <code className="tools-launch" title={config.launch.transport === "stdio" ? "run without a shell" : "Streamable HTTP"}>{launchLine(server)}</code>
            {server.error != null && <div className="error-box" data-testid="tools-server-error">{server.error}</div>}
            {server.tools.length > 0 && (
                <div className="tools-list" data-testid="tools-server-tools">
                    <b>{server.tools.length} tools</b>
                    {server.tools.map((tool) => (
                        <details key={tool.name} className="tools-tool" data-testid="tools-tool" data-tool={tool.name}>
                            <summary>
                                <code>{tool.name}</code>
                                {config.alwaysAllow.includes(tool.name) && <span className="pill" title="Its calls run without asking">always allowed</span>}
                                {tool.unusable != null && <span className="pill tone-warn" title={tool.unusable}>cannot be offered</span>}
                                <span className="faint tools-tool-description">{tool.description ?? ""}</span>
                            </summary>
                            {tool.unusable != null && <p className="faint">{tool.unusable}</p>}
                            <pre className="tools-schema" data-testid="tools-tool-schema">{JSON.stringify(tool.inputSchema, null, 2)}</pre>
                        </details>
                    ))}
                </div>
            )}
            {config.alwaysAllow.length > 0 && (
                <div className="row tools-always" data-testid="tools-always">
                    <span className="faint">Run without asking:</span>
                    {config.alwaysAllow.map((tool) => (
                        <button key={tool} className="button small ghost" title="Ask again before each call" data-testid="tools-always-revoke"
                            onClick={() => void saveServer({...config, alwaysAllow: config.alwaysAllow.filter((other) => other !== tool)}, config.name)}>
                            {tool} ✕</button>
                    ))}
                </div>
            )}
            <details className="tools-log" data-testid="tools-server-log" open={server.status === "failed"}>
                <summary>Log <span className="faint">(the server's stderr, and the app's notes marked —)</span></summary>
                <pre className="tools-log-text">{server.log.length === 0 ? "(nothing yet)" : server.log.join("\n")}</pre>
            </details>
        </section>
    );
}
