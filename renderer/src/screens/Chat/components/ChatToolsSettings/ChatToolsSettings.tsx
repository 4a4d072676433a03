import {useEffect} from "react";
import type {ChatToolSettings, ToolChoiceSetting} from "../../../../../../electron/contract/ipc";
import {isToolChoice, TOOL_CHOICES} from "../../../../../../electron/contract/tools";
import {refreshTools, startServer} from "../../../../actions/toolActions";
import {useToolsStore} from "../../../../stores/toolsStore";
import {useUiStore} from "../../../../stores/uiStore";
import "./ChatToolsSettings.css";

const CHOICE_LABELS: Record<ToolChoiceSetting, string> = {
    auto: "The model may call them",
    required: "The reply begins with a call",
    none: "Off: not shown to the model"
};

/**
 * Which MCP tools a conversation turns on, and the tool choice; `onChange` saves them with the conversation (`undefined`:
 * none on, the default choice). A server never started has no tool list yet: Start lists them (it starts nothing else).
 */
export function ChatToolsSettings({tools, onChange}: {tools: ChatToolSettings | undefined; onChange: (tools: ChatToolSettings | undefined) => void}) {
    const state = useToolsStore((store) => store.state);
    const show = useUiStore((store) => store.show);
    useEffect(() => {
        void refreshTools();
    }, []);
    const on = tools?.on ?? [];
    const choice = tools?.choice ?? "auto";
    const save = (next: ChatToolSettings) => onChange(next.on.length === 0 && next.choice === "auto" ? undefined : next);
    const isOn = (server: string, tool: string) => on.some((ref) => ref.server === server && ref.tool === tool);
    const toggle = (server: string, tool: string) => save({choice, on: isOn(server, tool)
        ? on.filter((ref) => ref.server !== server || ref.tool !== tool) : [...on, {server, tool}]});
    const servers = state?.servers ?? [];
    return (
        <div className="chat-settings-field chat-tools" data-testid="chat-tools">
            <span>Tools <small className="faint">from MCP servers; each call waits for your approval</small></span>
            <select className="input" data-testid="setting-toolChoice" value={choice} onChange={(event) => {
                if (isToolChoice(event.target.value))
                    save({on, choice: event.target.value});
            }}>
                {TOOL_CHOICES.map((value) => <option key={value} value={value}>{CHOICE_LABELS[value]}</option>)}
            </select>
            {servers.length === 0 && (
                <p className="faint chat-tools-empty">No MCP servers yet. <button className="button ghost small" onClick={() => show("tools")}>Add one on the Tools screen</button></p>
            )}
            {servers.map((server) => (
                <div className="chat-tools-server" key={server.config.name}>
                    <div className="chat-tools-server-name">
                        <b>{server.config.name}</b>
                        <span className="faint">{!server.config.enabled ? "disabled" : server.status}</span>
                    </div>
                    {server.tools.length === 0 && server.config.enabled && (
                        <button className="button small" data-testid={`chat-tools-start-${server.config.name}`} disabled={server.status === "starting"}
                            onClick={() => void startServer(server.config.name)}>{server.status === "starting" ? "Starting…" : "Start it to list its tools"}</button>
                    )}
                    {server.status === "failed" && server.error != null && <p className="faint chat-tools-error">{server.error}</p>}
                    {server.tools.map((tool) => (
                        <label key={tool.name} className="chat-tools-tool" title={tool.unusable ?? tool.description ?? ""}>
                            <input type="checkbox" data-testid={`tool-toggle-${server.config.name}-${tool.name}`} checked={isOn(server.config.name, tool.name)}
                                disabled={tool.unusable != null && !isOn(server.config.name, tool.name)}
                                onChange={() => toggle(server.config.name, tool.name)}/>
                            <span>{tool.name}</span>
                        </label>
                    ))}
                </div>
            ))}
            {on.filter((ref) => !servers.some((server) => server.config.name === ref.server && server.tools.some((tool) => tool.name === ref.tool))).map((ref) => (
                <label key={`${ref.server}/${ref.tool}`} className="chat-tools-tool" title="Not listed by a configured server now: a reply is refused until it is, or it is turned off">
                    <input type="checkbox" checked onChange={() => toggle(ref.server, ref.tool)}/>
                    <span>{ref.tool} <span className="faint">({ref.server}, not listed)</span></span>
                </label>
            ))}
        </div>
    );
}
