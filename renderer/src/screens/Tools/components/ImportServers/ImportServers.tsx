import {useState} from "react";
import {importServers} from "../../../../actions/toolActions";

/**
 * Imports the `mcpServers` JSON of Claude Desktop (claude_desktop_config.json), LM Studio (mcp.json) or Cursor (mcp.json):
 * pasted, or read from a file. Each server is added disabled; nothing starts until it is enabled.
 */
export function ImportServers() {
    const [text, setText] = useState("");
    const [added, setAdded] = useState<string[] | null>(null);
    const run = async () => {
        const names = await importServers(text);
        if (names.length > 0) {
            setAdded(names);
            setText("");
        }
    };
    return (
        <details className="panel tools-import" data-testid="tools-import">
            <summary><b>Import from Claude Desktop, LM Studio or Cursor</b> <span className="faint">their mcpServers JSON</span></summary>
            <div className="stack tools-import-body">
                <textarea className="input tools-textarea" data-testid="tools-import-text" rows={6} value={text} onChange={(event) => setText(event.target.value)}
                    placeholder={'{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]}}}'}/>
                <div className="row">
                    <label className="button small">Read a file…
                        <input type="file" accept=".json,application/json" hidden onChange={(event) => {
                            const file = event.target.files?.[0];
                            if (file != null)
                                void file.text().then(setText);
                        }}/>
                    </label>
                    <button className="button primary small" data-testid="tools-import-run" disabled={text.trim() === ""} onClick={() => void run()}>Import</button>
                    {added != null && <span className="faint" data-testid="tools-import-added">Added, disabled: {added.join(", ")}</span>}
                </div>
            </div>
        </details>
    );
}
