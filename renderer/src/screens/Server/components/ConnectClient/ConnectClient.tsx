import {useState} from "react";
import {clientConnection, clientSnippets, maskKey} from "../../../../../../electron/contract/clientSnippets";
import type {ServerState} from "../../../../../../electron/contract/server";
import {CopyButton} from "../CopyButton/CopyButton";
import "./ConnectClient.css";

/**
 * "Connect a client": the base URL, key and model id a client sets, and snippets for an OpenAI client, an Anthropic
 * client and Claude Code, each with a copy button. The key is masked on screen until revealed; what is copied holds it.
 */
export function ConnectClient({server}: {server: ServerState}) {
    const [revealed, setRevealed] = useState(false);
    const connection = clientConnection(server);
    const shownKey = !server.requireKey || revealed ? connection.key : maskKey(connection.key);
    return (
        <section className="panel stack connect-client" data-testid="connect-client">
            <div className="row connect-client-head">
                <b>Connect a client</b>
                {server.requireKey && (
                    <button className="button small ghost" data-testid="connect-reveal" onClick={() => setRevealed(!revealed)}>{revealed ? "Hide key" : "Show key"}</button>
                )}
            </div>
            <div className="connect-client-fields">
                <span className="faint">OpenAI base URL</span><code data-testid="connect-openai-url">{connection.openAiBaseUrl}</code>
                <CopyButton text={connection.openAiBaseUrl} testId="connect-copy-openai-url"/>
                <span className="faint">Anthropic base URL</span><code data-testid="connect-anthropic-url">{connection.anthropicBaseUrl}</code>
                <CopyButton text={connection.anthropicBaseUrl} testId="connect-copy-anthropic-url"/>
                <span className="faint">API key</span><code data-testid="connect-key">{shownKey}</code>
                <CopyButton text={connection.key} testId="connect-copy-key"/>
                <span className="faint">Model</span><code data-testid="connect-model">{connection.model}</code>
                <CopyButton text={connection.model} testId="connect-copy-model"/>
            </div>
            {clientSnippets(connection).map((snippet) => (
                <div className="stack-tight" key={snippet.id} data-testid="connect-snippet" data-id={snippet.id}>
                    <div className="row connect-client-head"><span>{snippet.title}</span><CopyButton text={snippet.text} testId="connect-copy-snippet"/></div>
                    <pre className="server-curl">{revealed ? snippet.text : snippet.masked}</pre>
                </div>
            ))}
        </section>
    );
}
