import {useEffect, useState} from "react";
import {curlExample, isLoopbackHost, type ServerState} from "../../../../electron/contract/server";
import {changeServer, refreshServer} from "../../actions/serverActions";
import {useServerStore} from "../../stores/serverStore";
import {ServedRequests} from "./components/ServedRequests/ServedRequests";
import "./Server.css";

const STATUS_TEXT: Record<ServerState["status"], string> = {
    "off": "Off",
    "waiting-for-model": "On — waiting for a model (load one on the Model screen)",
    "starting": "Starting…",
    "serving": "Serving",
    "failed": "Could not start"
};

/** Copies `text`; says so for a moment on the button. */
function CopyButton({text, testId}: {text: string; testId: string}) {
    const [copied, setCopied] = useState(false);
    return (
        <button className="button small" data-testid={testId} onClick={() => {
            void navigator.clipboard?.writeText(text).then(() => {
                setCopied(true);
                setTimeout(() => setCopied(false), 1500);
            });
        }}>{copied ? "Copied" : "Copy"}</button>
    );
}

/**
 * The app's OpenAI-compatible server: on/off, port, bind address, API key and a `curl` to try it. It serves the model
 * loaded on the Model screen; the app's own chat shares its sequences while it is on.
 */
export function Server() {
    const server = useServerStore((state) => state.server);
    const error = useServerStore((state) => state.error);
    const [port, setPort] = useState("");
    const [address, setAddress] = useState("");
    const [parallel, setParallel] = useState("");
    useEffect(() => {
        void refreshServer();
    }, []);
    // the fields show what the host holds whenever it changes (an applied edit, another window's change)
    const savedPort = server?.port;
    const savedAddress = server?.bindAddress;
    const savedParallel = server?.parallel;
    useEffect(() => {
        if (savedPort != null)
            setPort(String(savedPort));
        if (savedAddress != null)
            setAddress(savedAddress);
        if (savedParallel != null)
            setParallel(String(savedParallel));
    }, [savedPort, savedAddress, savedParallel]);
    if (server == null)
        return <div className="screen"><div className="notice">Reading the server's settings…</div></div>;
    const open = !isLoopbackHost(address);
    const edited = port !== String(server.port) || address !== server.bindAddress || parallel !== String(server.parallel);
    const apply = () => void changeServer({port: Number(port), bindAddress: address.trim(), parallel: Number(parallel)});

    return (
        <div className="screen server-screen">
            <div className="screen-header">
                <div>
                    <h1>Server</h1>
                    <p>An OpenAI-compatible API for the loaded model, for other programs on this machine (or your network, with a key). The app's own chat shares its sequences while it is on.</p>
                </div>
            </div>
            <div className="stack">
                <section className="panel stack">
                    <div className="row server-toggle">
                        <label className="row">
                            <input type="checkbox" data-testid="server-enabled" checked={server.enabled}
                                onChange={(event) => void changeServer({enabled: event.target.checked})}/>
                            <b>Serve the loaded model</b>
                        </label>
                        <span className={`pill server-status status-${server.status}`} data-testid="server-status" data-status={server.status}>
                            {STATUS_TEXT[server.status]}
                        </span>
                    </div>
                    {server.url != null && <div className="muted">Base URL <code data-testid="server-url">{server.url}</code> · model <code>{server.modelId}</code></div>}
                    {server.error != null && <div className="error-box" data-testid="server-failure">{server.error}</div>}
                </section>
                <section className="panel stack">
                    <div className="server-fields">
                        <label className="stack-tight">Port
                            <input className="input" data-testid="server-port" inputMode="numeric" value={port} onChange={(event) => setPort(event.target.value)}/>
                        </label>
                        <label className="stack-tight">Bind address
                            <input className="input" data-testid="server-address" list="server-addresses" value={address} onChange={(event) => setAddress(event.target.value)}/>
                            <datalist id="server-addresses">
                                <option value="127.0.0.1">this machine only</option>
                                <option value="0.0.0.0">every network interface</option>
                            </datalist>
                        </label>
                        <label className="stack-tight">Parallel sequences
                            <input className="input" data-testid="server-parallel" inputMode="numeric" value={parallel} onChange={(event) => setParallel(event.target.value)}/>
                        </label>
                        <button className="button primary" data-testid="server-apply" disabled={!edited} onClick={apply}>Apply</button>
                    </div>
                    {open && <div className="faint">Other machines can reach {address}: clients must send the API key.</div>}
                    <div className="faint">Each sequence holds the loaded context size of KV cache; turning the server on makes the context again with them.</div>
                </section>
                <section className="panel stack">
                    <label className="row">
                        <input type="checkbox" data-testid="server-require-key" checked={server.requireKey}
                            onChange={(event) => void changeServer({requireKey: event.target.checked})}/>
                        Require API key
                    </label>
                    <div className="row server-key">
                        <code data-testid="server-key">{server.apiKey}</code>
                        <CopyButton text={server.apiKey} testId="server-copy-key"/>
                        <button className="button small ghost" data-testid="server-regenerate" onClick={() => void changeServer({regenerateKey: true})}>New key</button>
                    </div>
                </section>
                {error != null && <div className="error-box" data-testid="server-error">{error}</div>}
                <section className="panel stack">
                    <div className="row server-curl-head"><b>Try it</b><CopyButton text={curlExample(server)} testId="server-copy-curl"/></div>
                    <pre className="server-curl" data-testid="server-curl">{curlExample(server)}</pre>
                </section>
                <ServedRequests recent={server.recent} served={server.served}/>
            </div>
        </div>
    );
}
