/**
 * The `mcpServers` JSON that Claude Desktop (claude_desktop_config.json), LM Studio (mcp.json) and Cursor (mcp.json)
 * share: `{"mcpServers": {"<name>": {"command", "args", "env", "cwd"} | {"url", "headers"}}}`, read as untrusted input.
 * Each server becomes a configuration checked like any other (checkMcpServerConfig.ts), **disabled**: an imported file
 * never starts a program by itself, and grants no approvals. A field this app cannot honour (another transport, an
 * auto-approval list, anything unknown) refuses the whole file in one sentence that names it, rather than importing a
 * server that would run differently from what the file says.
 */
import {DEFAULT_TOOL_CALL_SECONDS, MAX_MCP_SERVERS, type McpServerConfig} from "../../contract/tools.js";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {checkMcpServerConfig, command, environment, headers, httpUrl, workingFolder} from "./checkMcpServerConfig.js";

/** Fields of one entry this app reads (`type` only to check it names a transport it speaks). */
const ENTRY_FIELDS = ["command", "args", "env", "cwd", "url", "headers", "type", "disabled", "timeout"] as const;
/** What other apps write in `type` for the transports this app speaks. */
const STDIO_TYPES = ["stdio"];
const HTTP_TYPES = ["http", "streamable-http", "streamableHttp"];

function refuse(reason: string): TensorwiseError {
    return new TensorwiseError("bad-request", `These servers cannot be imported: ${reason.replace(/\.$/, "")}.`);
}

function entry(name: string, value: unknown): McpServerConfig {
    const at = `"mcpServers.${name.slice(0, 40)}"`;
    if (value == null || typeof value !== "object" || Array.isArray(value))
        throw refuse(`${at} must be an object`);
    const fields = value as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((key) => !(ENTRY_FIELDS as readonly string[]).includes(key));
    if (unknown.length > 0)
        throw refuse(`${at} has ${unknown.length === 1 ? "a field" : "fields"} this app does not read: ${unknown.slice(0, 4).map((key) => JSON.stringify(key.slice(0, 40))).join(", ")} ` +
            "(remove it, or add the server by hand on the Tools screen)");
    const type = fields.type;
    if (type === "sse")
        throw refuse(`${at} uses the older SSE transport ("type": "sse"), which this app does not speak: use the server's Streamable HTTP address`);
    if (type != null && (typeof type !== "string" || ![...STDIO_TYPES, ...HTTP_TYPES].includes(type)))
        throw refuse(`${at}: "type" must be "stdio" or "http"`);
    if (fields.disabled != null && typeof fields.disabled !== "boolean")
        throw refuse(`${at}: "disabled" must be true or false`);
    const hasUrl = fields.url != null;
    const hasCommand = fields.command != null;
    if (hasUrl === hasCommand)
        throw refuse(`${at} needs either "command" (a program to start) or "url" (a server to reach), not ${hasUrl ? "both" : "neither"}`);
    if ((hasUrl && type != null && !HTTP_TYPES.includes(type as string)) || (hasCommand && type != null && !STDIO_TYPES.includes(type as string)))
        throw refuse(`${at}: "type" ${JSON.stringify(type)} does not match ${hasUrl ? '"url"' : '"command"'}`);
    try {
        const launch = hasUrl
            ? {transport: "http" as const, url: httpUrl(fields.url, `${at}.url`), headers: headers(fields.headers ?? {}, `${at}.headers`)}
            : {
                transport: "stdio" as const, command: command(fields.command, `${at}.command`), args: fields.args ?? [],
                env: environment(fields.env ?? {}, `${at}.env`), cwd: workingFolder(fields.cwd, `${at}.cwd`)
            };
        if (hasUrl && (fields.args != null || fields.env != null || fields.cwd != null))
            throw refuse(`${at} reaches a URL, so "args", "env" and "cwd" mean nothing for it`);
        if (hasCommand && fields.headers != null)
            throw refuse(`${at} starts a program, so "headers" mean nothing for it`);
        // every imported server starts disabled: nothing runs until the user enables it
        return checkMcpServerConfig({
            name, enabled: false, launch, callTimeoutSeconds: fields.timeout ?? DEFAULT_TOOL_CALL_SECONDS, alwaysAllow: []
        });
    } catch (error) {
        if (error instanceof TensorwiseError && !error.message.startsWith("These servers"))
            throw refuse(`${at}: ${error.message}`);
        throw error;
    }
}

/**
 * The servers of an `mcpServers` JSON text, each disabled, checked against `taken` (the names configured already);
 * throws a `bad-request` with one sentence when any of it cannot be imported as written.
 */
export function importMcpServers(text: string, taken: readonly string[]): McpServerConfig[] {
    if (text.length > TEXT_LIMITS.mcpImport)
        throw refuse(`the text is longer than ${TEXT_LIMITS.mcpImport} characters`);
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch (error) {
        throw refuse(`it is not JSON (${(error as Error).message.slice(0, 120)})`);
    }
    if (parsed == null || typeof parsed !== "object" || Array.isArray(parsed) || !Object.hasOwn(parsed, "mcpServers"))
        throw refuse('it has no "mcpServers" object (the format of Claude Desktop\'s, LM Studio\'s and Cursor\'s configuration)');
    const servers = (parsed as {mcpServers: unknown}).mcpServers;
    if (servers == null || typeof servers !== "object" || Array.isArray(servers))
        throw refuse('"mcpServers" must be an object of server names to servers');
    const entries = Object.entries(servers);
    if (entries.length === 0)
        throw refuse('"mcpServers" is empty');
    if (entries.length + taken.length > MAX_MCP_SERVERS)
        throw refuse(`at most ${MAX_MCP_SERVERS} servers can be configured (${taken.length} are, the file has ${entries.length})`);
    const configs = entries.map(([name, value]) => entry(name, value));
    for (const config of configs)
        if (taken.includes(config.name))
            throw refuse(`a server named "${config.name}" is configured already: remove it or rename it in the file`);
    return configs;
}
