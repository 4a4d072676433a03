/**
 * Tools in the app's chat: the Model Context Protocol servers the user configured (run by electron/host/tools/), their
 * state as the Tools screen shows it, the tool calls a reply makes and their results as a conversation keeps them,
 * and which tools a conversation turns on. A leaf like the rest of electron/contract.
 */

// ---- servers ----------------------------------------------------------------------------------------------------------

/** How a server is reached: a program the app starts (stdio), or a URL (MCP's Streamable HTTP transport). */
export const MCP_TRANSPORTS = ["stdio", "http"] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

/**
 * How to start a server: a command with its arguments, environment (added to a small safe set: PATH, HOME, …, never
 * the app's whole environment) and working folder (`null`: the app's); or a URL with the headers sent on every request.
 */
export type McpServerLaunch =
    | {transport: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd: string | null}
    | {transport: "http"; url: string; headers: Record<string, string>};

/** One server as the user configured it (kept in `<data dir>/mcp-servers.json`). */
export type McpServerConfig = {
    /** Unique; what the chat's tool list and the tool call cards show. {@link MCP_SERVER_NAME_PATTERN}. */
    name: string;
    /** A disabled server is never started; its tools are offered to no conversation. */
    enabled: boolean;
    launch: McpServerLaunch;
    /** How long one call may take before it fails as timed out. Defaults to {@link DEFAULT_TOOL_CALL_SECONDS}. */
    callTimeoutSeconds: number;
    /** Tools whose calls run without asking (the user chose "Always for this tool"). */
    alwaysAllow: string[];
};

/** A server's name: letters, digits, spaces, dots, dashes and underscores, starting with a letter or digit. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

export const DEFAULT_TOOL_CALL_SECONDS = 60;

/** Where a server is: not started (started when a reply needs its tools, or by Start), starting, running, or failed. */
export type McpServerStatus = "stopped" | "starting" | "running" | "failed";

/** A tool a server lists, as the model will see it; `unusable` says why it cannot be offered (its schema too large). */
export type McpTool = {
    name: string;
    description: string | null;
    /** The JSON schema of its arguments, as the server sent it. */
    inputSchema: Record<string, unknown>;
    unusable: string | null;
};

export type McpServerState = {
    config: McpServerConfig;
    status: McpServerStatus;
    /** Why it failed to start or stopped, in a sentence; `null` when it did not. */
    error: string | null;
    /** Its tools, as it last listed them (kept after it stops, to choose from). */
    tools: McpTool[];
    /** The last lines it wrote to stderr (stdio) and what the app noted about it (starts, stops, protocol errors). */
    log: string[];
    /** The process the app started for it (stdio, while running). */
    pid: number | null;
    /** The name and version the server gave for itself. */
    serverInfo: string | null;
};

/** Every configured server; `notices`: why the saved list could not be read whole (said once, kept until changed). */
export type ToolServersState = {servers: McpServerState[]; notices: string[]};

/** The most characters of a tool's name (MCP allows 1 to 128). */
export const MCP_TOOL_NAME_CHARS = 128;

/** The most servers the app keeps. */
export const MAX_MCP_SERVERS = 32;
/** Lines of a server's log the Tools screen shows, and the most characters of each. */
export const MCP_LOG_LINES = 200;
export const MCP_LOG_LINE_CHARS = 500;
/** The most characters of a tool's schema a prompt carries (a larger one is listed as unusable). */
export const MAX_TOOL_SCHEMA_CHARS = 16_384;
/** The most bytes of one message from a server (a larger answer stops it: electron/host/tools/McpConnection.ts). */
export const MCP_MESSAGE_MAX_BYTES = 8 * 1024 * 1024;

// ---- a conversation's tools -------------------------------------------------------------------------------------------

/**
 * Whether the model may call (`auto`), must begin its reply with a call (`required`: later rounds of the same reply are
 * `auto`, or it could never answer), or may not (`none`: the tools are still not shown to it).
 */
export const TOOL_CHOICES = ["auto", "required", "none"] as const;
export type ToolChoiceSetting = (typeof TOOL_CHOICES)[number];

export function isToolChoice(value: unknown): value is ToolChoiceSetting {
    return typeof value === "string" && (TOOL_CHOICES as readonly string[]).includes(value);
}

/** One tool of one server. */
export type ToolRef = {server: string; tool: string};

/** A conversation's tools: those turned on, and the tool choice. */
export type ChatToolSettings = {on: ToolRef[]; choice: ToolChoiceSetting};

/** The most tools one conversation turns on. */
export const MAX_CHAT_TOOLS = 64;
/** Rounds of tool calls in one reply: after the last, the model answers without tools. */
export const MAX_TOOL_ROUNDS = 8;

// ---- calls and results ------------------------------------------------------------------------------------------------

/**
 * Where a call is: waiting for the user's decision, running, done (the server answered, `result`), failed (`error`),
 * denied by the user, or stopped (the reply was stopped before or while it ran). A call saved as `pending` or `running`
 * by a reply that has ended (the app was closed, the file imported) is shown as not run, and never runs.
 */
export const TOOL_CALL_STATES = ["pending", "running", "done", "failed", "denied", "stopped"] as const;
export type ToolCallState = (typeof TOOL_CALL_STATES)[number];

/** What a server answered, as shown and kept: its text, its images, notes on what was left out; never live HTML. */
export type ToolResultPart =
    | {type: "text"; text: string}
    | {type: "image"; mimeType: string; data: string}
    | {type: "note"; text: string};

export type ToolResult = {
    /** The server said the call failed (MCP's `isError`). */
    isError: boolean;
    parts: ToolResultPart[];
    /** The server's structured answer (`structuredContent`), as JSON text; `null` when none. */
    structured: string | null;
    /** What was cut, in a sentence ("12,345,678 characters, cut to 65,536"); `null` when nothing was. */
    capped: string | null;
};

/** One call of a reply, as the conversation keeps it. */
export type ToolCallRecord = {
    /** The call's id (the model's own, or one the engine gave). */
    id: string;
    server: string;
    tool: string;
    /** The arguments as the model wrote them (JSON text). */
    arguments: string;
    state: ToolCallState;
    /** Who let it run: the user's Approve, or "Always for this tool". */
    approval?: "user" | "always";
    result?: ToolResult;
    /** Why it failed (`failed`), in a sentence. */
    error?: string;
    /** How long the server took. */
    ms?: number;
};

/** The user's answer to a call waiting for approval. */
export const TOOL_DECISIONS = ["approve", "always", "deny"] as const;
export type ToolDecision = (typeof TOOL_DECISIONS)[number];

export function isToolDecision(value: unknown): value is ToolDecision {
    return typeof value === "string" && (TOOL_DECISIONS as readonly string[]).includes(value);
}

/** The most characters of a result's text kept with the conversation (and shown). */
export const TOOL_RESULT_KEPT_CHARS = 65_536;
/** The most characters of a result the model is given. */
export const TOOL_RESULT_MODEL_CHARS = 8_000;
/** The most images of one result kept, and the most base64 characters of each. */
export const TOOL_RESULT_IMAGES = 4;
export const TOOL_IMAGE_MAX_CHARS = 512 * 1024;
/** Image types shown inline (raster only: an SVG is markup). */
export const TOOL_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
