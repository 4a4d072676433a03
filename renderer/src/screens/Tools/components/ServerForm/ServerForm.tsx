import {useState} from "react";
import type {McpServerConfig} from "../../../../../../electron/contract/ipc";
import {saveServer} from "../../../../actions/toolActions";
import {EMPTY_FORM, fromFormText, toFormText, type ServerFormText} from "./serverFormText";

/**
 * Adds a server, or edits `editing`: a program the app starts (command, one argument per line, NAME=value environment
 * lines, a working folder) or a Streamable HTTP URL (with `Name: value` header lines), and each call's time limit.
 */
export function ServerForm({editing, onDone}: {editing: McpServerConfig | null; onDone: () => void}) {
    const [form, setForm] = useState<ServerFormText>(editing != null ? toFormText(editing) : EMPTY_FORM);
    const [problem, setProblem] = useState<string | null>(null);
    const field = (key: keyof ServerFormText) => ({
        value: String(form[key]),
        onChange: (event: {target: {value: string}}) => setForm({...form, [key]: event.target.value})
    });
    const submit = async () => {
        let config: McpServerConfig;
        try {
            config = fromFormText(form, editing?.alwaysAllow ?? []);
        } catch (error) {
            setProblem((error as Error).message);
            return;
        }
        setProblem(null);
        if (await saveServer(config, editing?.name))
            onDone();
    };
    return (
        <form className="panel stack tools-form" data-testid="tools-form" onSubmit={(event) => {
            event.preventDefault();
            void submit();
        }}>
            <h2>{editing != null ? `Edit ${editing.name}` : "Add a server"}</h2>
            <div className="tools-form-grid">
                <label className="tools-field">Name<input className="input" data-testid="tools-form-name" {...field("name")} placeholder="e.g. files"/></label>
                <label className="tools-field">Transport
                    <select className="input" data-testid="tools-form-transport" value={form.transport}
                        onChange={(event) => setForm({...form, transport: event.target.value === "http" ? "http" : "stdio"})}>
                        <option value="stdio">A program the app starts (stdio)</option>
                        <option value="http">A server at a URL (Streamable HTTP)</option>
                    </select>
                </label>
                <label className="tools-field">Call time limit (s)<input className="input" data-testid="tools-form-timeout" inputMode="numeric" {...field("timeout")}/></label>
            </div>
            {form.transport === "stdio" ? (
                <div className="tools-form-grid">
                    <label className="tools-field">Command<input className="input" data-testid="tools-form-command" {...field("command")} placeholder="npx"/></label>
                    <label className="tools-field">Working folder<input className="input" data-testid="tools-form-cwd" {...field("cwd")} placeholder="the app's"/></label>
                    <label className="tools-field wide">Arguments <small className="faint">one per line; no shell: nothing is expanded</small>
                        <textarea className="input tools-textarea" data-testid="tools-form-args" rows={3} {...field("args")} placeholder={"-y\n@modelcontextprotocol/server-filesystem\n/home/me/notes"}/>
                    </label>
                    <label className="tools-field wide">Environment <small className="faint">NAME=value per line, added to PATH, HOME and a few others (never the app's whole environment)</small>
                        <textarea className="input tools-textarea" data-testid="tools-form-env" rows={2} {...field("env")}/>
                    </label>
                </div>
            ) : (
                <div className="tools-form-grid">
                    <label className="tools-field wide">URL<input className="input" data-testid="tools-form-url" {...field("url")} placeholder="http://127.0.0.1:3001/mcp"/></label>
                    <label className="tools-field wide">Headers <small className="faint">Name: value per line</small>
                        <textarea className="input tools-textarea" data-testid="tools-form-headers" rows={2} {...field("headers")} placeholder="Authorization: Bearer …"/>
                    </label>
                </div>
            )}
            <label className="row"><input type="checkbox" data-testid="tools-form-enabled" checked={form.enabled} onChange={(event) => setForm({...form, enabled: event.target.checked})}/>
                Enabled (started when a chat's tools need it)</label>
            {problem != null && <div className="error-box" data-testid="tools-form-problem">{problem}</div>}
            <div className="row">
                <button className="button primary" type="submit" data-testid="tools-form-save">{editing != null ? "Save" : "Add"}</button>
                <button className="button ghost" type="button" onClick={onDone}>Cancel</button>
            </div>
        </form>
    );
}
