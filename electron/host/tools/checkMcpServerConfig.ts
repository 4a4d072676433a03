/**
 * An MCP server's configuration read from the untrusted side — a `tools.save` request, the saved list on disk, an
 * imported `mcpServers` file (importMcpServers.ts) — with the request checks' rules (checkRequest.ts): every field
 * known, typed and bounded, or a `bad-request` naming it. A server runs only what this returns: the command and
 * arguments as given (never through a shell), an environment of names a shell could set, headers HTTP can carry, an
 * http(s) URL.
 */
import {LIMITS, limitMessage, TEXT_LIMITS, withinLimit} from "../../contract/limits.js";
import {
    DEFAULT_TOOL_CALL_SECONDS, MCP_SERVER_NAME_PATTERN, MCP_TOOL_NAME_CHARS, type McpServerConfig, type McpServerLaunch
} from "../../contract/tools.js";
import {bad, object, string, type Fields} from "../checkRequest.js";

/** An environment variable's name, as a POSIX shell writes one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** An HTTP header's name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Names that would reach an object's prototype if used as keys. */
const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A server's name by {@link MCP_SERVER_NAME_PATTERN}. */
export function serverName(fields: Fields, key: string, what = ""): string {
    const name = string(fields, key, 64);
    if (!MCP_SERVER_NAME_PATTERN.test(name))
        throw bad(`${what}"${key}" must be 1 to 64 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit`);
    return name;
}

/** A text that holds no NUL or line break (it goes into a process's argument list or an HTTP header). */
function plainText(value: unknown, what: string, maxChars: number, options: {lineBreaks?: boolean} = {}): string {
    if (typeof value !== "string")
        throw bad(`${what} must be a string`);
    if (value.length > maxChars)
        throw bad(`${what} is longer than ${maxChars} characters`);
    if (value.includes("\0") || (options.lineBreaks === false && /[\r\n]/.test(value)))
        throw bad(`${what} must not contain ${options.lineBreaks === false ? "a line break or " : ""}a NUL character`);
    return value;
}

/** A list of at most {@link TEXT_LIMITS.mcpEntries} texts. */
function texts(value: unknown, what: string): string[] {
    if (!Array.isArray(value) || value.length > TEXT_LIMITS.mcpEntries)
        throw bad(`${what} must be a list of at most ${TEXT_LIMITS.mcpEntries} strings`);
    return value.map((entry, index) => plainText(entry, `${what}[${index}]`, TEXT_LIMITS.mcpValue));
}

/** An object of at most {@link TEXT_LIMITS.mcpEntries} names (by `pattern`) to texts. */
function namedTexts(value: unknown, what: string, pattern: RegExp, kind: string, lineBreaks: boolean): Record<string, string> {
    if (value == null || typeof value !== "object" || Array.isArray(value))
        throw bad(`${what} must be an object of names to strings`);
    const entries = Object.entries(value);
    if (entries.length > TEXT_LIMITS.mcpEntries)
        throw bad(`${what} has more than ${TEXT_LIMITS.mcpEntries} entries`);
    for (const [name] of entries)
        if (!pattern.test(name) || RESERVED_KEYS.has(name))
            throw bad(`${what}: ${JSON.stringify(name.slice(0, 40))} is not ${kind}`);
    return Object.fromEntries(entries.map(([name, text]) => [name, plainText(text, `${what}.${name}`, TEXT_LIMITS.mcpValue, {lineBreaks})]));
}

export function environment(value: unknown, what: string): Record<string, string> {
    return namedTexts(value, what, ENV_NAME, "an environment variable's name (letters, digits and _, not starting with a digit)", true);
}

export function headers(value: unknown, what: string): Record<string, string> {
    return namedTexts(value, what, HEADER_NAME, "an HTTP header's name", false);
}

/** An http(s) URL, as the URL parser writes it. */
export function httpUrl(value: unknown, what: string): string {
    const text = plainText(value, what, TEXT_LIMITS.mcpCommand, {lineBreaks: false});
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        throw bad(`${what} must be a URL such as http://127.0.0.1:3001/mcp`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
        throw bad(`${what} must be an http:// or https:// URL (got ${url.protocol})`);
    return url.href;
}

/** The command of a stdio server: a program name or path, run without a shell. */
export function command(value: unknown, what: string): string {
    const text = plainText(value, what, TEXT_LIMITS.mcpCommand, {lineBreaks: false});
    if (text.trim() === "")
        throw bad(`${what} must name the program that starts the server (such as npx or node)`);
    return text;
}

/** A working folder: an absolute path, or `null` for the app's own. */
export function workingFolder(value: unknown, what: string): string | null {
    if (value == null || value === "")
        return null;
    const text = plainText(value, what, TEXT_LIMITS.mcpCommand, {lineBreaks: false});
    if (!/^(\/|[A-Za-z]:[\\/])/.test(text))
        throw bad(`${what} must be an absolute path`);
    return text;
}

function launch(value: unknown): McpServerLaunch {
    const fields = object(value, ["transport", "command", "args", "env", "cwd", "url", "headers"], '"launch"');
    if (fields.transport === "stdio") {
        object(value, ["transport", "command", "args", "env", "cwd"], '"launch" of a stdio server');
        return {
            transport: "stdio", command: command(fields.command, '"launch.command"'), args: texts(fields.args ?? [], '"launch.args"'),
            env: environment(fields.env ?? {}, '"launch.env"'), cwd: workingFolder(fields.cwd, '"launch.cwd"')
        };
    }
    if (fields.transport === "http") {
        object(value, ["transport", "url", "headers"], '"launch" of an http server');
        return {transport: "http", url: httpUrl(fields.url, '"launch.url"'), headers: headers(fields.headers ?? {}, '"launch.headers"')};
    }
    throw bad('"launch.transport" must be "stdio" or "http"');
}

/** Tool names (at most {@link LIMITS.toolCount}), each as MCP allows one. */
export function toolNames(value: unknown, what: string): string[] {
    if (!Array.isArray(value) || value.length > LIMITS.toolCount.max)
        throw bad(`${what} must be a list of at most ${LIMITS.toolCount.max} tool names`);
    return [...new Set(value.map((entry, index) => plainText(entry, `${what}[${index}]`, MCP_TOOL_NAME_CHARS, {lineBreaks: false})))];
}

/** `value` as a server's configuration; throws a `bad-request` naming the first wrong field. */
export function checkMcpServerConfig(value: unknown): McpServerConfig {
    const fields = object(value, ["name", "enabled", "launch", "callTimeoutSeconds", "alwaysAllow"], "the server");
    if (typeof fields.enabled !== "boolean")
        throw bad('"enabled" must be true or false');
    const timeout = fields.callTimeoutSeconds ?? DEFAULT_TOOL_CALL_SECONDS;
    if (!withinLimit("toolCallSeconds", timeout))
        throw bad(`"callTimeoutSeconds": ${limitMessage("toolCallSeconds", timeout)}`);
    return {
        name: serverName(fields, "name"), enabled: fields.enabled, launch: launch(fields.launch), callTimeoutSeconds: timeout,
        alwaysAllow: toolNames(fields.alwaysAllow ?? [], '"alwaysAllow"')
    };
}
