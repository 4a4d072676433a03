import {useEffect, useState} from "react";
import {RPC_SECURITY_NOTE} from "../../../../../../electron/contract/rpc";
import {changeRpcServers, refreshRpcServers} from "../../../../actions/rpcActions";
import {useRpcStore} from "../../../../stores/rpcStore";
import "./RpcServers.css";

/**
 * Remote devices: rpc-servers (llama.cpp's `rpc-server`, or `tensorwise rpc-server`) added as host:port. Their devices
 * join this machine's for placement; adding or removing one restarts the engine, and the loaded model loads again.
 */
export function RpcServers() {
    const rpc = useRpcStore((state) => state.rpc);
    const changing = useRpcStore((state) => state.changing);
    const error = useRpcStore((state) => state.error);
    const [endpoint, setEndpoint] = useState("");
    useEffect(() => {
        void refreshRpcServers();
    }, []);
    const add = async () => {
        if (await changeRpcServers("add", endpoint.trim()))
            setEndpoint("");
    };
    return (
        <section className="panel rpc-servers" data-testid="rpc-servers">
            <div className="rpc-head">
                <h2>Remote devices</h2>
                <button className="button small ghost" data-testid="rpc-refresh" disabled={changing} onClick={() => void refreshRpcServers()}>Check again</button>
            </div>
            <p className="faint rpc-explain">
                Add an rpc-server (started with <code>tensorwise rpc-server --host 0.0.0.0</code> on another machine) as host:port:
                its devices join this machine's for placement. {RPC_SECURITY_NOTE}
            </p>
            {rpc != null && rpc.servers.length > 0 && (
                <ul className="rpc-list">
                    {rpc.servers.map((server) => (
                        <li key={server.endpoint} className="rpc-item" data-testid="rpc-item" data-endpoint={server.endpoint} data-reachable={server.reachable}>
                            <div className="rpc-item-main">
                                <code>{server.endpoint}</code>{" "}
                                <span className={`pill ${server.reachable ? "rpc-reachable" : "rpc-unreachable"}`}>{server.reachable ? "reachable" : "unreachable"}</span>
                                {server.problem != null && <div className="faint rpc-problem">{server.problem}</div>}
                            </div>
                            <button className="button small ghost" data-testid="rpc-remove" disabled={changing} aria-label={`Remove ${server.endpoint}`}
                                onClick={() => void changeRpcServers("remove", server.endpoint)}>✕</button>
                        </li>
                    ))}
                </ul>
            )}
            <form className="rpc-add" onSubmit={(event) => {
                event.preventDefault();
                void add();
            }}>
                <input className="input" data-testid="rpc-endpoint" placeholder="192.168.1.20:50052" value={endpoint}
                    onChange={(event) => setEndpoint(event.target.value)}/>
                <button className="button primary small" type="submit" data-testid="rpc-add" disabled={changing || endpoint.trim() === ""}>
                    {changing ? "Connecting…" : "Add"}
                </button>
            </form>
            {error != null && <div className="error-box" data-testid="rpc-error">{error}</div>}
        </section>
    );
}
