import type {ServedRequest} from "../../../../../../electron/contract/server";
import {formatMs} from "../../../../format/format";
import "./ServedRequests.css";

/** Why a request ended, in words: a completion's finish reason, or what an error code means for the client. */
const OUTCOME_TEXT: Record<string, string> = {
    "stop": "done",
    "length": "max tokens",
    "client-gone": "client disconnected",
    "invalid_api_key": "wrong or missing key",
    "queue_full": "queue full",
    "timeout": "time limit",
    "context_length_exceeded": "too long for the context",
    "embedded": "embeddings",
    "counted": "tokens counted",
    "origin_not_allowed": "web origin not allowed"
};

/** The requests the server answered since the app started, newest first: what a client developer checks first. */
export function ServedRequests({recent, served}: {recent: readonly ServedRequest[]; served: number}) {
    return (
        <section className="panel stack" data-testid="served-requests" data-count={served}>
            <div className="row served-head">
                <b>Requests</b>
                <span className="muted">{served === 0 ? "none yet" : `${served} since the app started${served > recent.length ? `, the last ${recent.length} shown` : ""}`}</span>
            </div>
            {recent.length > 0 && (
                <div className="served-scroll">
                    <table className="data served-table">
                        <thead>
                            <tr><th>Time</th><th>Endpoint</th><th>Status</th><th>Tokens in · out</th><th>Queue</th><th>TTFT</th><th>TPOT</th><th>Sequence · KV</th></tr>
                        </thead>
                        <tbody>
                            {recent.map((request, index) => (
                                <tr key={`${request.at}-${index}`} data-testid="served-request" data-status={request.status} className={request.status >= 400 ? "failed" : ""}>
                                    <td>{new Date(request.at).toLocaleTimeString()}</td>
                                    <td><code>{request.path}</code></td>
                                    <td>{request.status} <span className="muted">{OUTCOME_TEXT[request.outcome] ?? request.outcome}</span></td>
                                    <td>{request.promptTokens == null ? "—" : `${request.promptTokens} · ${request.generatedTokens ?? 0}`}</td>
                                    <td>{formatMs(request.queueMs)}</td>
                                    <td>{formatMs(request.ttftMs)}</td>
                                    <td>{formatMs(request.tpotMs)}</td>
                                    <td>{request.sequence == null ? "—" : `${request.sequence} · ${request.kv ?? "—"}`}</td>
                                </tr>
                            ))}
                        </tbody>
                    </table>
                </div>
            )}
        </section>
    );
}
