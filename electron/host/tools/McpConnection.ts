/**
 * One MCP server, as the official SDK's client speaks to it: started on demand (a stdio program under mcpGuardian.ts,
 * or where that cannot run in a process group watched by GroupStdioTransport.ts, so it cannot outlive the app; or a
 * Streamable HTTP URL), its tools listed (every page) and listed again when it says
 * they changed, each call bounded by the server's time limit and by {@link MCP_MESSAGE_MAX_BYTES}, stopped cleanly.
 * A server that lies — writes what is not JSON-RPC, answers with what is not an MCP result, answers too much, hangs,
 * crashes — fails the call in flight with a sentence that says so, and its state says why it stopped.
 */
import {existsSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {Client} from "@modelcontextprotocol/sdk/client/index.js";
import {StdioClientTransport} from "@modelcontextprotocol/sdk/client/stdio.js";
import {StreamableHTTPClientTransport} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {Transport} from "@modelcontextprotocol/sdk/shared/transport.js";
import {ErrorCode, McpError, type Tool} from "@modelcontextprotocol/sdk/types.js";
import {LIMITS} from "../../contract/limits.js";
import {
    MAX_TOOL_SCHEMA_CHARS, MCP_LOG_LINE_CHARS, MCP_LOG_LINES, MCP_MESSAGE_MAX_BYTES, type McpServerConfig, type McpServerState, type McpServerStatus,
    type McpTool, type ToolResult
} from "../../contract/tools.js";
import {GroupStdioTransport} from "./GroupStdioTransport.js";
import {toToolResult} from "./toToolResult.js";

/** How long a server has to start and list its tools. */
export const MCP_START_TIMEOUT_MS = 60_000;
/** Pages of a tool list read at most (a server that pages forever is cut there). */
const MAX_TOOL_PAGES = 16;
const CLIENT_INFO = {name: "tensorwise", version: "0.1.0"};

/** How a call ended: the server's result, a failure in a sentence, or the user's stop. */
export type CallOutcome = {result: ToolResult; ms: number} | {error: string; ms: number} | {stopped: true; ms: number};

/** The guardian's compiled entry beside this file, or in dist/ when running from sources; `null` where it is not used. */
export function guardianEntry(): string | null {
    // process groups are POSIX; in Electron the app's own binary is not a Node (its runAsNode fuse is off)
    if (process.platform === "win32" || process.versions.electron != null)
        return null;
    const here = path.dirname(fileURLToPath(import.meta.url));
    const sibling = path.join(here, "mcpGuardian.js");
    if (existsSync(sibling))
        return sibling;
    const built = path.resolve(here, "../../../dist/electron/host/tools/mcpGuardian.js");
    return existsSync(built) ? built : null;
}

/** `fetch`, with each POST's answer cut off (an error) past `maxBytes`: a long-lived GET event stream is not counted. */
function cappedFetch(maxBytes: number): typeof fetch {
    return async (input, init) => {
        const response = await fetch(input, init);
        if (response.body == null || (init?.method ?? "GET").toUpperCase() !== "POST")
            return response;
        let seen = 0;
        const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
                seen += chunk.byteLength;
                if (seen > maxBytes)
                    controller.error(new Error(`the server answered with more than ${maxBytes / 1024 / 1024} MiB`));
                else
                    controller.enqueue(chunk);
            }
        }));
        return new Response(body, {status: response.status, statusText: response.statusText, headers: response.headers});
    };
}

/** `error`'s message, one line (a schema error's first issue, with where it is). */
function firstLine(error: unknown): string {
    const issue = (error as {issues?: {path?: unknown[]; message?: string}[]}).issues?.[0];
    if (issue?.message != null)
        return `${(issue.path ?? []).join(".") || "the message"}: ${issue.message}`.slice(0, 300);
    return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300);
}

/** Whether `error` is the SDK's parse of what the server wrote failing (not JSON, or not an MCP message). */
function isParseError(error: unknown): boolean {
    return error instanceof SyntaxError || Array.isArray((error as {issues?: unknown}).issues);
}

export class McpConnection {
    private status: McpServerStatus = "stopped";
    private error: string | null = null;
    private tools: McpTool[] = [];
    private readonly log: string[] = [];
    private client: Client | null = null;
    private transport: Transport | null = null;
    private starting: Promise<void> | null = null;
    private stopping = false;
    /** Why the server is being given up on (a lie or an oversized answer), for the calls it fails. */
    private problem: string | null = null;
    private serverInfo: string | null = null;
    /** Requests in flight (the start, calls), failed at once when the server lies. */
    private readonly inFlight = new Set<AbortController>();

    /** `onChange`: the state changed (status, tools, log). */
    constructor(private configValue: McpServerConfig, private readonly onChange: () => void, private readonly guardian = guardianEntry()) {}

    get config(): McpServerConfig {
        return this.configValue;
    }

    /** A new configuration of the same server (approvals added): takes effect at once; the launch at the next start. */
    set config(config: McpServerConfig) {
        this.configValue = config;
        this.onChange();
    }

    state(): McpServerState {
        const stdio = this.transport instanceof StdioClientTransport || this.transport instanceof GroupStdioTransport ? this.transport : null;
        return {
            config: this.configValue, status: this.status, error: this.error, tools: this.tools, log: [...this.log],
            pid: this.status === "running" ? stdio?.pid ?? null : null, serverInfo: this.serverInfo
        };
    }

    /** Starts the server unless it runs; resolves when its tools are listed, throws the sentence of its failure. */
    async start(): Promise<void> {
        if (this.status === "running")
            return;
        this.starting ??= this.startNow().finally(() => {
            this.starting = null;
        });
        await this.starting;
    }

    private async startNow(): Promise<void> {
        const config = this.configValue;
        this.status = "starting";
        this.error = null;
        this.problem = null;
        this.stopping = false;
        this.note(`starting ${config.launch.transport === "stdio" ? [config.launch.command, ...config.launch.args].join(" ") : config.launch.url}`);
        const client = new Client(CLIENT_INFO, {
            capabilities: {},
            listChanged: {tools: {autoRefresh: false, onChanged: () => void this.listAgain(client)}}
        });
        client.onerror = (error) => this.protocolError(client, error);
        client.onclose = () => this.closed(client);
        const transport = this.makeTransport(config);
        this.client = client;
        this.transport = transport;
        const controller = new AbortController();
        this.inFlight.add(controller);
        try {
            await client.connect(transport, {timeout: MCP_START_TIMEOUT_MS, signal: controller.signal});
            const version = client.getServerVersion();
            this.serverInfo = version != null ? `${version.name.slice(0, 100)} ${version.version.slice(0, 40)}` : null;
            this.tools = await this.listTools(client, controller.signal);
            if (this.client !== client)
                throw new Error("it was stopped while it started");
            this.status = "running";
            this.note(`running${this.state().pid != null ? ` (pid ${this.state().pid})` : ""}: ${this.tools.length} tools`);
        } catch (error) {
            const reason = this.failure(error, MCP_START_TIMEOUT_MS / 1000, "start", controller.signal);
            if (this.client === client) {
                this.client = null;
                this.transport = null;
                this.stopping = true;
                await client.close().catch(() => {});
                this.status = "failed";
                this.error = `The server could not start: ${reason}`;
                this.note(this.error);
            }
            throw new Error(this.error ?? reason);
        } finally {
            this.inFlight.delete(controller);
            this.onChange();
        }
    }

    private makeTransport(config: McpServerConfig): Transport {
        const launch = config.launch;
        if (launch.transport === "http")
            return new StreamableHTTPClientTransport(new URL(launch.url), {
                requestInit: {headers: launch.headers}, fetch: cappedFetch(MCP_MESSAGE_MAX_BYTES),
                reconnectionOptions: {maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1}
            });
        // the guardian where a Node runs it; else the server's own process group and a watchdog (POSIX); else directly
        const transport = this.guardian == null && process.platform !== "win32"
            ? new GroupStdioTransport({command: launch.command, args: launch.args, env: launch.env, cwd: launch.cwd, maxBufferSize: MCP_MESSAGE_MAX_BYTES})
            : new StdioClientTransport({
                ...(this.guardian != null
                    ? {command: process.execPath, args: [this.guardian, launch.command, ...launch.args]}
                    : {command: launch.command, args: launch.args}),
                env: launch.env, ...(launch.cwd != null && {cwd: launch.cwd}), stderr: "pipe", maxBufferSize: MCP_MESSAGE_MAX_BYTES
            });
        let partial = "";
        transport.stderr?.on("data", (chunk: Buffer) => {
            const lines = (partial + chunk.toString("utf8")).split("\n");
            partial = lines.pop()!.slice(0, MCP_LOG_LINE_CHARS);
            for (const line of lines)
                this.addLog(line);
            this.onChange();
        });
        return transport;
    }

    /** Every page of the server's tool list, each tool checked for what a prompt can carry. */
    private async listTools(client: Client, signal: AbortSignal): Promise<McpTool[]> {
        const listed: Tool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_TOOL_PAGES; page++) {
            const answer = await client.listTools(cursor != null ? {cursor} : undefined, {timeout: MCP_START_TIMEOUT_MS, signal});
            listed.push(...answer.tools);
            cursor = answer.nextCursor;
            if (cursor == null)
                break;
        }
        if (cursor != null)
            this.note(`the tool list has more than ${MAX_TOOL_PAGES} pages: the rest is left out`);
        const max = LIMITS.toolCount.max;
        if (listed.length > max)
            this.note(`${listed.length} tools listed: only the first ${max} can be offered to a model`);
        return listed.slice(0, max).map((tool) => {
            const schemaChars = JSON.stringify(tool.inputSchema).length;
            return {
                name: tool.name, description: tool.description ?? null, inputSchema: tool.inputSchema as Record<string, unknown>,
                unusable: schemaChars > MAX_TOOL_SCHEMA_CHARS ? `its argument schema has ${schemaChars} characters, more than the ${MAX_TOOL_SCHEMA_CHARS} a prompt carries` : null
            };
        });
    }

    private async listAgain(client: Client): Promise<void> {
        if (this.client !== client || this.status !== "running")
            return;
        try {
            this.tools = await this.listTools(client, AbortSignal.timeout(MCP_START_TIMEOUT_MS));
            this.note(`its tools changed: ${this.tools.length} tools`);
        } catch (error) {
            this.note(`its tools changed, but listing them failed: ${firstLine(error)}`);
        }
        this.onChange();
    }

    /**
     * Calls `tool` with `args` within the configured time limit; `signal` is the user's stop. Starts the server first
     * when it is not running.
     */
    async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome> {
        const started = performance.now();
        const ms = () => Math.round(performance.now() - started);
        try {
            await this.start();
        } catch (error) {
            return {error: firstLine(error), ms: ms()};
        }
        const client = this.client!;
        const controller = new AbortController();
        const stop = () => controller.abort(new Error("stopped by the user"));
        if (signal.aborted)
            return {stopped: true, ms: 0};
        signal.addEventListener("abort", stop, {once: true});
        this.inFlight.add(controller);
        const timeoutMs = this.configValue.callTimeoutSeconds * 1000;
        try {
            const raw = await client.callTool({name: tool, arguments: args}, undefined, {timeout: timeoutMs, maxTotalTimeout: timeoutMs, signal: controller.signal});
            return {result: toToolResult(raw as Parameters<typeof toToolResult>[0]), ms: ms()};
        } catch (error) {
            if (signal.aborted)
                return {stopped: true, ms: ms()};
            return {error: this.failure(error, this.configValue.callTimeoutSeconds, "call", controller.signal), ms: ms()};
        } finally {
            signal.removeEventListener("abort", stop);
            this.inFlight.delete(controller);
        }
    }

    /** Stops the server (its process group, for stdio: mcpGuardian.ts or GroupStdioTransport.ts); its tools are kept to choose from. */
    async stop(): Promise<void> {
        const client = this.client;
        this.client = null;
        this.transport = null;
        this.stopping = true;
        for (const controller of this.inFlight)
            controller.abort(new Error("the server was stopped"));
        if (client != null) {
            await client.close().catch(() => {});
            this.note("stopped");
        }
        if (this.status !== "failed")
            this.status = "stopped";
        this.onChange();
    }

    /** Why a request failed, in a sentence (`what`: "start" or "call"; `signal`: the request's, aborted with the reason this class gave). */
    private failure(error: unknown, seconds: number, what: "start" | "call", signal: AbortSignal): string {
        if (signal.aborted && signal.reason instanceof Error)
            return signal.reason.message;
        if (error instanceof McpError) {
            if (error.code === ErrorCode.RequestTimeout)
                return `the server did not answer within ${seconds} s${what === "call" ? " (the call's time limit, set on the Tools screen)" : ""}.`;
            if (error.code === ErrorCode.ConnectionClosed)
                return `the server stopped before it answered${this.lastWords()}.`;
            const said = firstLine(error).replace(/^MCP error -?\d+: /, "");
            // the SDK's own check of a result against the tool's outputSchema (Client.callTool)
            if (/output schema|structured content/i.test(said))
                return `the server's answer does not match its own output schema (${said}).`;
            return `the server refused: ${said}`;
        }
        if (isParseError(error))
            return `the server's answer is not a valid MCP ${what === "call" ? "tool result" : "message"} (${firstLine(error)}).`;
        const code = (error as {code?: unknown}).code;
        if (code === "ENOENT")
            return `${this.configValue.launch.transport === "stdio" ? this.configValue.launch.command : "it"} was not found.`;
        return `${firstLine(error)}${this.lastWords()}`;
    }

    /** The last line the server wrote to stderr, as a clause. */
    private lastWords(): string {
        const last = this.log.filter((line) => !line.startsWith("— ")).at(-1);
        return last != null ? `; its last words: "${last.slice(0, 200)}"` : "";
    }

    /** An error the SDK reports outside any request: what the server wrote could not be read, or was too large. */
    private protocolError(client: Client, error: Error): void {
        // a transport given up on may still deliver what it had buffered
        if (this.client !== client)
            return;
        const message = firstLine(error);
        if (/exceeded maximum size|more than .* MiB/.test(message)) {
            this.problem ??= `the server answered with more than ${MCP_MESSAGE_MAX_BYTES / 1024 / 1024} MiB, so the app stopped it.`;
            this.abortInFlight(this.problem);
            void this.giveUp(client, this.problem);
        } else if (isParseError(error)) {
            // a stray line is not fatal (a server printing to stdout by mistake), but no answer can come for what it ate
            const reason = `the server wrote something that is not an MCP message (${message}).`;
            this.note(reason);
            this.abortInFlight(reason);
        } else
            this.note(`protocol error: ${message}`);
        this.onChange();
    }

    private abortInFlight(reason: string): void {
        for (const controller of this.inFlight)
            if (!controller.signal.aborted)
                controller.abort(new Error(reason));
    }

    /** Stops a server that broke the protocol beyond repair; the next call starts it again. */
    private async giveUp(client: Client, problem: string): Promise<void> {
        if (this.client !== client)
            return;
        this.client = null;
        this.transport = null;
        this.stopping = true;
        this.status = "failed";
        this.error = `It was stopped: ${problem}`;
        this.note(this.error);
        this.onChange();
        await client.close().catch(() => {});
    }

    private closed(client: Client): void {
        if (this.client !== client || this.stopping)
            return;
        this.abortInFlight(this.problem ?? `the server stopped before it answered${this.lastWords()}.`);
        // a server that stops while it starts: the start reports it
        if (this.status === "starting")
            return;
        this.client = null;
        this.transport = null;
        this.status = "failed";
        this.error = this.problem != null ? `It was stopped: ${this.problem}` : `The server stopped unexpectedly${this.lastWords()}.`;
        this.note(this.error);
        this.onChange();
    }

    /** A line of the app's own about the server, marked apart from what the server wrote. */
    private note(line: string): void {
        this.addLog(`— ${line}`);
    }

    private addLog(line: string): void {
        this.log.push(line.replace(/\r$/, "").slice(0, MCP_LOG_LINE_CHARS));
        if (this.log.length > MCP_LOG_LINES)
            this.log.splice(0, this.log.length - MCP_LOG_LINES);
    }
}
