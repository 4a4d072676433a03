import {useEffect, useState} from "react";
import {curlExample, isLoopbackHost, type ServerState} from "../../../../electron/contract/server";
import {changeServer, refreshServer} from "../../actions/serverActions";
import {useServerStore} from "../../stores/serverStore";
import {ServedRequests} from "./components/ServedRequests/ServedRequests";
import {ConnectClient} from "./components/ConnectClient/ConnectClient";
import {CopyButton} from "./components/CopyButton/CopyButton";
import {ServerStartupProgress} from "./components/ServerStartupProgress/ServerStartupProgress";
import "./Server.css";

const STATUS_TEXT: Record<ServerState["status"], string> = {
    "off": "Off",
    "waiting-for-model": "On — waiting for a model (load one on the Model screen)",
    "starting": "Starting…",
    "serving": "Serving",
    "failed": "Could not start"
};

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
    const [kvDisk, setKvDisk] = useState("");
    const [origins, setOrigins] = useState("");
    const [clientName, setClientName] = useState("");
    useEffect(() => {
        void refreshServer();
    }, []);
    // the fields show what the host holds whenever it changes (an applied edit, another window's change)
    const savedPort = server?.port;
    const savedAddress = server?.bindAddress;
    const savedParallel = server?.parallel;
    const savedKvDisk = server?.kvDiskBudgetMiB;
    const savedOrigins = server?.corsOrigins.join(", ");
    useEffect(() => {
        if (savedPort != null)
            setPort(String(savedPort));
        if (savedAddress != null)
            setAddress(savedAddress);
        if (savedParallel != null)
            setParallel(String(savedParallel));
        if (savedKvDisk !== undefined)
            setKvDisk(savedKvDisk == null ? "" : String(savedKvDisk));
        if (savedOrigins != null)
            setOrigins(savedOrigins);
    }, [savedPort, savedAddress, savedParallel, savedKvDisk, savedOrigins]);
    if (server == null)
        return <div className="screen"><div className="notice">Reading the server's settings…</div></div>;
    const open = !isLoopbackHost(address);
    const savedKvDiskText = server.kvDiskBudgetMiB == null ? "" : String(server.kvDiskBudgetMiB);
    const edited = port !== String(server.port) || address !== server.bindAddress || parallel !== String(server.parallel) || kvDisk.trim() !== savedKvDiskText ||
        origins.trim() !== server.corsOrigins.join(", ");
    // an empty KV budget is the default share of free space; anything else is sent as typed, for the host to check
    const apply = () => void changeServer({port: Number(port), bindAddress: address.trim(), parallel: Number(parallel),
        kvDiskBudgetMiB: kvDisk.trim() === "" ? null : Number(kvDisk.trim()),
        // the host checks each origin (contract/corsOrigins.ts) and answers with their canonical form
        corsOrigins: origins.split(",").map((origin) => origin.trim()).filter((origin) => origin !== "")});
    const addClientKey = () => {
        void changeServer({addClientKey: clientName.trim()});
        setClientName("");
    };

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
                    {server.status === "starting" && server.startup != null && <ServerStartupProgress startup={server.startup}/>}
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
                        <label className="stack-tight" title="Conversations beyond the sequences keep their KV cache in files up to this size; beyond it the oldest are recomputed when they return. Empty: 10% of the free space.">KV state on disk (MiB)
                            <input className="input" data-testid="server-kv-disk" inputMode="numeric" placeholder="10% of free space" value={kvDisk} onChange={(event) => setKvDisk(event.target.value)}/>
                        </label>
                        <label className="stack-tight" title="Web pages on these origins may call the server from a browser (CORS), e.g. http://localhost:5173. Empty: none.">Allowed web origins
                            <input className="input" data-testid="server-cors-origins" placeholder="none" value={origins} onChange={(event) => setOrigins(event.target.value)}/>
                        </label>
                        <button className="button primary" data-testid="server-apply" disabled={!edited} onClick={apply}>Apply</button>
                    </div>
                    {open && <div className="faint">Other machines can reach {address}: clients must send the API key.</div>}
                    <div className="faint">Each sequence holds the loaded context size of KV cache; turning the server on makes the context again with them. With two or more, one is kept for this app's own chat, so it never waits behind API clients.</div>
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
                    <div className="stack-tight" data-testid="client-keys">
                        <b>Client keys</b>
                        <span className="faint">One key per program: each is its own tenant (its conversations and their cached prompts are its alone) and can be revoked on its own.</span>
                        {server.clientKeys.map((entry) => (
                            <div className="row server-key" key={entry.name} data-testid="client-key" data-name={entry.name}>
                                <span>{entry.name}</span>
                                <code>{entry.key}</code>
                                <CopyButton text={entry.key} testId="client-key-copy"/>
                                <button className="button small ghost" data-testid="client-key-revoke" onClick={() => void changeServer({revokeClientKey: entry.name})}>Revoke</button>
                            </div>
                        ))}
                        <form className="row" onSubmit={(event) => {
                            event.preventDefault();
                            addClientKey();
                        }}>
                            <input className="input" data-testid="client-key-name" placeholder="Name, e.g. editor" maxLength={40} value={clientName}
                                onChange={(event) => setClientName(event.target.value)}/>
                            <button className="button small" type="submit" data-testid="client-key-add" disabled={clientName.trim() === ""}>Add key</button>
                        </form>
                    </div>
                </section>
                {error != null && <div className="error-box" data-testid="server-error">{error}</div>}
                <section className="panel stack">
                    <div className="row server-curl-head"><b>Try it</b><CopyButton text={curlExample(server)} testId="server-copy-curl"/></div>
                    <pre className="server-curl" data-testid="server-curl">{curlExample(server)}</pre>
                </section>
                <ConnectClient server={server}/>
                <ServedRequests recent={server.recent} served={server.served}/>
            </div>
        </div>
    );
}
