import {useState} from "react";
import type {HubQuant} from "../../../../electron/contract/ipc";
import {cancelHubTask, downloadQuant, listQuants, searchHub} from "../../actions/hubActions";
import {ErrorNotice} from "../../components/ErrorNotice/ErrorNotice";
import {ProgressBar} from "../../components/ProgressBar/ProgressBar";
import {formatBytes, formatMsRange} from "../../format/format";
import {useHubStore} from "../../stores/hubStore";

/** "Get a model": search the hub, see how fast each quant would run here before downloading it, download one. */
export function GetModel() {
    const {query, search, repo, quants, download} = useHubStore();
    const [text, setText] = useState(query);
    return (
        <div className="screen get-model-screen">
            <div className="screen-header">
                <div>
                    <h1>Get a model</h1>
                    <p>Search Hugging Face for GGUF models. Each quant is planned on this machine from its header alone, before you download it.</p>
                </div>
            </div>
            <div className="stack">
                <form className="panel row" onSubmit={(event) => {
                    event.preventDefault();
                    void searchHub(text);
                }}>
                    <input className="input" data-testid="hub-query" value={text} maxLength={200} placeholder="e.g. llama 3.2 3b instruct"
                        onChange={(event) => setText(event.target.value)}/>
                    <button type="submit" className="button primary" data-testid="hub-search" disabled={search.status === "running"}>Search</button>
                </form>
                {search.status === "failed" && <ErrorNotice testId="hub-search-error" title="The search failed." error={search.error}/>}
                {search.status === "ready" && (
                    <div className="panel" data-testid="hub-results">
                        {search.result.length === 0 && <p className="faint">No GGUF repositories match "{query}".</p>}
                        <ul className="hub-results">
                            {search.result.map((result) => (
                                <li key={result.id}>
                                    <button className={`button ${repo === result.id ? "primary" : ""}`} onClick={() => void listQuants(result.id)}>{result.id}</button>
                                    {result.downloads != null && <span className="faint"> {result.downloads.toLocaleString()} downloads</span>}
                                </li>
                            ))}
                        </ul>
                    </div>
                )}
                {quants.status === "running" && (
                    <div className="panel row">
                        <ProgressBar testId="hub-quants-progress" value={null} label={`Planning the quants of ${repo}`} detail={quants.detail ?? "reading each file's header"}/>
                        {quants.taskId != null && <button className="button" onClick={() => void cancelHubTask(quants.taskId!)}>Cancel</button>}
                    </div>
                )}
                {quants.status === "failed" && <ErrorNotice testId="hub-quants-error" title={`The quants of ${repo} cannot be listed.`} error={quants.error}/>}
                {quants.status === "ready" && (
                    <div className="panel" data-testid="hub-quants">
                        <h2>{quants.result.repo}</h2>
                        <p className="faint">
                            Predicted for a {quants.result.workload.promptTokens}-token prompt and a {quants.result.workload.genTokens}-token reply on this machine, fastest that fits first.
                        </p>
                        <table className="data">
                            <thead><tr><th>Quant</th><th>Size</th><th>Where</th><th>TTFT</th><th>Tokens/s</th><th>GPU memory</th><th>RAM</th><th/></tr></thead>
                            <tbody>
                                {quants.result.quants.map((quant) => (
                                    <QuantRow key={quant.name} quant={quant} busy={download.status === "downloading"}
                                        onDownload={() => void downloadQuant(quants.result.repo, quant.name)}/>
                                ))}
                            </tbody>
                        </table>
                        {quants.result.quants.some((quant) => quant.needsProfile) && (
                            <div className="row">
                                <span className="faint">This machine has no profile for some quants' operators yet.</span>
                                <button className="button" data-testid="hub-profile" onClick={() => void listQuants(quants.result.repo, true)}>Profile this machine and plan (about 20 s per quant type)</button>
                            </div>
                        )}
                    </div>
                )}
                {download.status === "downloading" && (
                    <div className="panel row">
                        <ProgressBar testId="hub-download-progress" value={download.progress} label={`Downloading ${download.repo}:${download.quant}`} detail={download.detail ?? "starting"}/>
                        <button className="button" data-testid="hub-cancel" onClick={() => void cancelHubTask(download.taskId)}>Cancel</button>
                    </div>
                )}
                {download.status === "failed" && (
                    <ErrorNotice testId="hub-download-error" title={`${download.repo}:${download.quant} was not downloaded.`} error={download.error}/>
                )}
            </div>
        </div>
    );
}

function QuantRow({quant, busy, onDownload}: {quant: HubQuant; busy: boolean; onDownload: () => void}) {
    const plan = quant.plan;
    return (
        <tr data-testid={`hub-quant-${quant.name}`}>
            <td>{quant.name}</td>
            <td>{formatBytes(quant.bytes)}</td>
            {plan == null
                ? <td colSpan={5} className="faint">{quant.notPlanned}</td>
                : <>
                    <td>{plan.placement}</td>
                    <td title={plan.ranges == null ? undefined : `${formatMsRange(plan.ranges.ttft.lowMs, plan.ranges.ttft.highMs)}, from this machine's measured prediction errors`}>
                        {plan.ttftMs.toFixed(0)} ms{plan.ranges != null && <span className="faint"> ({formatMsRange(plan.ranges.ttft.lowMs, plan.ranges.ttft.highMs)})</span>}</td>
                    <td>{plan.tokensPerSecond.toFixed(1)}{plan.ranges != null &&
                        <span className="faint"> (about {(1000 / plan.ranges.tpot.highMs).toFixed(1)}–{(1000 / plan.ranges.tpot.lowMs).toFixed(1)})</span>}</td>
                    <td>{plan.gpuName == null ? "—" : formatBytes(plan.gpuBytes)}</td>
                    <td>{formatBytes(plan.hostBytes)}{plan.fitsRam ? "" : " (more than is free)"}</td>
                </>}
            <td><button className="button primary" disabled={busy} onClick={onDownload}>Download</button></td>
        </tr>
    );
}
