/**
 * What a client program sets to use the app's server — base URL, key and model id — and copy-paste snippets for an
 * OpenAI client (Python, JavaScript), an Anthropic client and a coding agent (Claude Code), as the Server screen shows
 * them. The key goes into each snippet twice over: `key` for copying, and a masked form for showing until the user
 * reveals it.
 */
import type {ServerState} from "./server.js";

/** Where a client connects: the OpenAI base URL ends in `/v1`; Anthropic's clients add `/v1` themselves. */
export type ClientConnection = {openAiBaseUrl: string; anthropicBaseUrl: string; key: string; model: string};

export type ClientSnippet = {
    id: "openai-python" | "openai-js" | "anthropic-python" | "claude-code";
    title: string;
    /** The snippet with the key, for the clipboard. */
    text: string;
    /** The same with the key masked, for the screen. */
    masked: string;
};

/** A model id for the snippets before the server serves one. */
const MODEL_PLACEHOLDER = "<model id>";
/** What a client sends when the server takes no key (the SDKs insist on one). */
const NO_KEY = "not-needed";

/** The base URLs, key and model of the server in `state`. */
export function clientConnection(state: Pick<ServerState, "url" | "port" | "bindAddress" | "requireKey" | "apiKey" | "modelId">): ClientConnection {
    const host = state.bindAddress === "0.0.0.0" || state.bindAddress === "::" ? "127.0.0.1" : state.bindAddress;
    const openAiBaseUrl = state.url ?? `http://${host.includes(":") ? `[${host}]` : host}:${state.port}/v1`;
    return {openAiBaseUrl, anthropicBaseUrl: openAiBaseUrl.replace(/\/v1$/, ""), key: state.requireKey ? state.apiKey : NO_KEY, model: state.modelId ?? MODEL_PLACEHOLDER};
}

/** `key` with all but its first 3 and last 4 characters hidden (a key this short is hidden whole). */
export function maskKey(key: string): string {
    return key.length <= 12 ? "•".repeat(key.length) : `${key.slice(0, 3)}${"•".repeat(key.length - 7)}${key.slice(-4)}`;
}

export function clientSnippets(connection: ClientConnection): ClientSnippet[] {
    const {openAiBaseUrl, anthropicBaseUrl, key, model} = connection;
    const make = (id: ClientSnippet["id"], title: string, lines: (key: string) => string[]): ClientSnippet =>
        ({id, title, text: lines(key).join("\n"), masked: lines(key === NO_KEY ? key : maskKey(key)).join("\n")});
    return [
        make("openai-python", "OpenAI client, Python", (shown) => [
            "from openai import OpenAI",
            "",
            `client = OpenAI(base_url="${openAiBaseUrl}", api_key="${shown}")`,
            `reply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])`,
            "print(reply.choices[0].message.content)"
        ]),
        make("openai-js", "OpenAI client, JavaScript", (shown) => [
            "import OpenAI from \"openai\";",
            "",
            `const client = new OpenAI({baseURL: "${openAiBaseUrl}", apiKey: "${shown}"});`,
            `const reply = await client.chat.completions.create({model: "${model}", messages: [{role: "user", content: "Hello"}]});`,
            "console.log(reply.choices[0].message.content);"
        ]),
        make("anthropic-python", "Anthropic client, Python", (shown) => [
            "import anthropic",
            "",
            `client = anthropic.Anthropic(base_url="${anthropicBaseUrl}", api_key="${shown}")`,
            `message = client.messages.create(model="${model}", max_tokens=512, messages=[{"role": "user", "content": "Hello"}])`,
            "print(message.content[0].text)"
        ]),
        make("claude-code", "Claude Code (coding agent)", (shown) => [
            `export ANTHROPIC_BASE_URL="${anthropicBaseUrl}"`,
            `export ANTHROPIC_AUTH_TOKEN="${shown}"`,
            `export ANTHROPIC_MODEL="${model}"`,
            "# this server does not run tools yet: a request that sends tools is refused (400) naming them",
            "claude"
        ])
    ];
}
