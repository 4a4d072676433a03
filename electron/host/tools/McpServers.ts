/**
 * The MCP servers the user configured: their list, kept in `<data dir>/mcp-servers.json` (every write atomic:
 * storage/JsonFileStore.ts; a file this code cannot read whole is moved aside and said so), one McpConnection each,
 * and what a reply needs of them: the tools a conversation turns on, resolved to the functions the model sees (each
 * server started on demand), the calls run, the approvals kept. Every server is stopped when the app ends ({@link
 * dispose}). Nothing here starts a server unless the user pressed Start or sent a message whose tools need it.
 */
import type {EngineTool} from "../../contract/engineProtocol.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {MAX_MCP_SERVERS, type ChatToolSettings, type McpServerConfig, type ToolRef, type ToolServersState} from "../../contract/tools.js";
import {readJsonFile, writeJsonFile} from "../storage/JsonFileStore.js";
import {checkMcpServerConfig} from "./checkMcpServerConfig.js";
import {importMcpServers} from "./importMcpServers.js";
import {McpConnection, type CallOutcome} from "./McpConnection.js";

/** The list's file name in the data folder. */
export const MCP_SERVERS_FILE = "mcp-servers.json";
const FORMAT_VERSION = 1;
/** Changes reach the clients at most this often (a server writing its log fast). */
const BROADCAST_MS = 100;

/** A reply's tools: the functions the model sees, and which server's tool each name is. */
export type ResolvedTools = {tools: EngineTool[]; refs: Map<string, ToolRef>};

export class McpServers {
    private readonly connections = new Map<string, McpConnection>();
    private readonly notices: string[] = [];
    private reading: Promise<void> | null = null;
    private writes: Promise<unknown> = Promise.resolve();
    private broadcastTimer: NodeJS.Timeout | null = null;
    private disposed = false;

    /** `onState`: every change, at most every {@link BROADCAST_MS}. */
    constructor(readonly file: string, private readonly onState: (state: ToolServersState) => void) {}

    async state(): Promise<ToolServersState> {
        await this.ready();
        return this.snapshot();
    }

    /** Adds `config`, or replaces the server named `replaces` (stopped first). */
    async save(config: McpServerConfig, replaces?: string): Promise<ToolServersState> {
        await this.ready();
        if (replaces != null && !this.connections.has(replaces))
            throw new TensorwiseError("not-found", `there is no server named "${replaces}" to change`);
        if (config.name !== replaces && this.connections.has(config.name))
            throw new TensorwiseError("bad-request", `a server named "${config.name}" exists already: choose another name`);
        if (replaces == null && this.connections.size >= MAX_MCP_SERVERS)
            throw new TensorwiseError("bad-request", `at most ${MAX_MCP_SERVERS} servers can be configured: remove one first`);
        const old = replaces != null ? this.connections.get(replaces) : undefined;
        await old?.stop();
        const entries = [...this.connections.entries()].map(([name, connection]): [string, McpConnection] =>
            name === replaces ? [config.name, this.connect(config)] : [name, connection]);
        if (replaces == null)
            entries.push([config.name, this.connect(config)]);
        await this.replaceAll(entries);
        return this.snapshot();
    }

    async remove(name: string): Promise<ToolServersState> {
        const connection = await this.connection(name);
        await connection.stop();
        await this.replaceAll([...this.connections.entries()].filter(([other]) => other !== name));
        return this.snapshot();
    }

    /** Adds the servers of an `mcpServers` JSON, each disabled (importMcpServers.ts); starts nothing. */
    async import(text: string): Promise<{state: ToolServersState; added: string[]}> {
        await this.ready();
        const configs = importMcpServers(text, [...this.connections.keys()]);
        await this.replaceAll([...this.connections.entries(), ...configs.map((config): [string, McpConnection] => [config.name, this.connect(config)])]);
        return {state: this.snapshot(), added: configs.map((config) => config.name)};
    }

    /** Starts `name` (again, when it failed) and lists its tools; a failure stays in its state. */
    async start(name: string): Promise<ToolServersState> {
        const connection = await this.connection(name);
        if (!connection.config.enabled)
            throw new TensorwiseError("bad-request", `"${name}" is disabled: enable it first`);
        await connection.start().catch(() => {});
        return this.snapshot();
    }

    async stop(name: string): Promise<ToolServersState> {
        await (await this.connection(name)).stop();
        return this.snapshot();
    }

    /**
     * The tools a conversation turns on, as the model will see them: each server they belong to started (on demand),
     * each tool found in its list. A tool that cannot be offered as the user asked (its server disabled, removed or
     * failing, the tool gone or unusable, two tools of one name) refuses the reply in a sentence naming it. `stopped`
     * (the user's Stop) ends the wait for a server that is still starting; its start goes on.
     */
    async resolve(settings: ChatToolSettings, stopped: AbortSignal = new AbortController().signal): Promise<ResolvedTools> {
        await this.ready();
        const refs = new Map<string, ToolRef>();
        const tools: EngineTool[] = [];
        const servers = [...new Set(settings.on.map((ref) => ref.server))];
        for (const server of servers) {
            const connection = this.connections.get(server);
            const fix = "turn its tools off in this chat's settings";
            if (connection == null)
                throw new TensorwiseError("bad-request", `This chat's tools include the server "${server}", which is not configured on the Tools screen: add it, or ${fix}.`);
            if (!connection.config.enabled)
                throw new TensorwiseError("bad-request", `This chat's tools include the server "${server}", which is disabled on the Tools screen: enable it, or ${fix}.`);
            const refusal = () => new TensorwiseError("aborted", `Stopped while the MCP server "${server}" was starting: nothing was sent.`);
            if (stopped.aborted)
                throw refusal();
            try {
                await new Promise<void>((resolve, reject) => {
                    const stop = () => reject(refusal());
                    stopped.addEventListener("abort", stop, {once: true});
                    connection.start().then(resolve, reject).finally(() => stopped.removeEventListener("abort", stop));
                });
            } catch (error) {
                if (stopped.aborted)
                    throw refusal();
                throw new TensorwiseError("tool-server-failed", `The MCP server "${server}" could not start, so this chat's tools cannot be offered: ` +
                    `${(error as Error).message.replace(/^The server could not start: /, "")} See its log on the Tools screen, or ${fix}.`);
            }
        }
        for (const ref of settings.on) {
            const tool = this.connections.get(ref.server)!.state().tools.find((listed) => listed.name === ref.tool);
            if (tool == null)
                throw new TensorwiseError("bad-request", `The tool "${ref.tool}" is on in this chat, but the server "${ref.server}" no longer lists it: turn it off in this chat's settings.`);
            if (tool.unusable != null)
                throw new TensorwiseError("bad-request", `The tool "${ref.tool}" of "${ref.server}" cannot be offered to a model: ${tool.unusable}. Turn it off in this chat's settings.`);
            const taken = refs.get(tool.name);
            if (taken != null)
                throw new TensorwiseError("bad-request", `Two tools on in this chat are both named "${tool.name}" (of "${taken.server}" and "${ref.server}"): ` +
                    "the model could not tell them apart; turn one off.");
            refs.set(tool.name, ref);
            tools.push({name: tool.name, description: tool.description, parameters: tool.inputSchema});
        }
        return {tools, refs};
    }

    /** Whether calls of `ref` run without asking (the user chose "Always for this tool"). */
    alwaysAllowed(ref: ToolRef): boolean {
        return this.connections.get(ref.server)?.config.alwaysAllow.includes(ref.tool) === true;
    }

    /** Lets every later call of `ref` run without asking, kept with its server. */
    async allowAlways(ref: ToolRef): Promise<void> {
        const connection = await this.connection(ref.server);
        if (connection.config.alwaysAllow.includes(ref.tool))
            return;
        connection.config = {...connection.config, alwaysAllow: [...connection.config.alwaysAllow, ref.tool]};
        await this.replaceAll([...this.connections.entries()]);
    }

    /** Runs one call of `ref` with `args`; `signal` is the user's stop. */
    async call(ref: ToolRef, args: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome> {
        const connection = this.connections.get(ref.server);
        if (connection == null || !connection.config.enabled)
            return {error: `the server "${ref.server}" is no longer ${connection == null ? "configured" : "enabled"}.`, ms: 0};
        return await connection.call(ref.tool, args, signal);
    }

    /** Stops every server and waits for each to end. */
    async dispose(): Promise<void> {
        this.disposed = true;
        if (this.broadcastTimer != null)
            clearTimeout(this.broadcastTimer);
        await Promise.allSettled([...this.connections.values()].map((connection) => connection.stop()));
        await this.writes.catch(() => {});
    }

    private snapshot(): ToolServersState {
        return {servers: [...this.connections.values()].map((connection) => connection.state()), notices: [...this.notices]};
    }

    private connect(config: McpServerConfig): McpConnection {
        return new McpConnection(config, () => this.changed());
    }

    private async connection(name: string): Promise<McpConnection> {
        await this.ready();
        const connection = this.connections.get(name);
        if (connection == null)
            throw new TensorwiseError("not-found", `there is no server named "${name.slice(0, 64)}"`);
        return connection;
    }

    /** Writes the list of `entries` (their configurations), then makes it the list; one write at a time. */
    private async replaceAll(entries: [string, McpConnection][]): Promise<void> {
        const write = this.writes.catch(() => {}).then(async () => {
            await writeJsonFile(this.file, FORMAT_VERSION, {servers: entries.map(([, connection]) => connection.config)});
            this.connections.clear();
            for (const [name, connection] of entries)
                this.connections.set(name, connection);
        });
        this.writes = write;
        await write;
        this.changed();
    }

    private changed(): void {
        if (this.disposed || this.broadcastTimer != null)
            return;
        this.broadcastTimer = setTimeout(() => {
            this.broadcastTimer = null;
            this.onState(this.snapshot());
        }, BROADCAST_MS);
    }

    private async ready(): Promise<void> {
        this.reading ??= this.read();
        await this.reading;
    }

    private async read(): Promise<void> {
        let reason = "";
        const configs = await readJsonFile(this.file, "the MCP server list", (parsed) => {
            const file = parsed as {version?: unknown; servers?: unknown} | null;
            if (file?.version !== FORMAT_VERSION || !Array.isArray(file.servers) || file.servers.length > MAX_MCP_SERVERS) {
                reason = "it is not a list of servers this app wrote";
                return null;
            }
            try {
                const checked = file.servers.map(checkMcpServerConfig);
                if (new Set(checked.map((config) => config.name)).size !== checked.length)
                    throw new Error("two servers have one name");
                return checked;
            } catch (error) {
                reason = (error as Error).message;
                return null;
            }
        }).catch((error: unknown) => {
            this.notices.push((error as Error).message);
            return null;
        });
        if (configs == null && reason !== "")
            this.notices.push(`The MCP server list ${this.file} could not be read (${reason.slice(0, 200)}): it was moved aside beside it, and the list starts empty.`);
        for (const config of configs ?? [])
            this.connections.set(config.name, this.connect(config));
    }
}
