import {useEffect, useState} from "react";
import {refreshTools} from "../../actions/toolActions";
import {useToolsStore} from "../../stores/toolsStore";
import {ImportServers} from "./components/ImportServers/ImportServers";
import {ServerCard} from "./components/ServerCard/ServerCard";
import {ServerForm} from "./components/ServerForm/ServerForm";
import "./Tools.css";

/**
 * The MCP servers the chat's tools come from: added by hand or imported, each started only when a chat's tools need it
 * (or by Start), with its state, tools, schemas and log. Which tools a conversation uses is set in its settings.
 */
export function Tools() {
    const state = useToolsStore((store) => store.state);
    const error = useToolsStore((store) => store.error);
    const [editing, setEditing] = useState<string | "new" | null>(null);
    useEffect(() => {
        void refreshTools();
    }, []);
    const servers = state?.servers ?? [];
    const edited = editing != null && editing !== "new" ? servers.find((server) => server.config.name === editing)?.config ?? null : null;
    return (
        <div className="screen tools-screen">
            <div className="screen-header">
                <div>
                    <h1>Tools</h1>
                    <p>MCP servers whose tools a chat can offer the model. Each call waits for your approval in the chat; a server runs only what you configure here, and stops with the app.</p>
                </div>
                {editing == null && <button className="button primary" data-testid="tools-add" onClick={() => setEditing("new")}>Add a server</button>}
            </div>
            <div className="stack">
                {state?.notices.map((notice) => <div key={notice} className="notice" data-testid="tools-notice">{notice}</div>)}
                {error != null && <div className="error-box" data-testid="tools-error" role="alert">{error}</div>}
                {editing != null && <ServerForm key={editing} editing={edited} onDone={() => setEditing(null)}/>}
                <ImportServers/>
                {state != null && servers.length === 0 && editing == null && (
                    <div className="notice">No servers yet: add one, or import the configuration you use with another app.</div>
                )}
                {servers.map((server) => <ServerCard key={server.config.name} server={server} onEdit={() => setEditing(server.config.name)}/>)}
            </div>
        </div>
    );
}
