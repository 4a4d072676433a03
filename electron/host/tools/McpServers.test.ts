/**
 * The configured MCP servers (McpServers.ts) and what reaches them from the untrusted side: a Claude Desktop / LM Studio
 * / Cursor `mcpServers` file imported (each server disabled, nothing started), hostile files and requests refused in
 * one sentence that names the field, the saved list kept across a restart and a damaged one moved aside, and the
 * tools a conversation turns on resolved — starting the server they need on demand, or refusing by name.
 */
import {mkdtemp, readdir, readFile, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import type {McpServerConfig, ToolServersState} from "../../contract/tools.js";
import {checkRequest} from "../checkRequest.js";
import {importMcpServers} from "./importMcpServers.js";
import {McpServers} from "./McpServers.js";

const LYING = path.resolve("electron/host/tools/testing/lyingMcpServer.mjs");

const CLAUDE_DESKTOP = JSON.stringify({
    mcpServers: {
        filesystem: {command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
        github: {command: "docker", args: ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"], env: {GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_x"}}
    }
});
const LM_STUDIO = JSON.stringify({mcpServers: {"hf-mcp-server": {url: "https://huggingface.co/mcp", headers: {Authorization: "Bearer hf_x"}}}});

const liar = (name: string, enabled = true): McpServerConfig => ({
    name, enabled, launch: {transport: "stdio", command: process.execPath, args: [LYING], env: {}, cwd: null}, callTimeoutSeconds: 5, alwaysAllow: []
});

describe("an mcpServers file to import", () => {
    it("reads Claude Desktop's, LM Studio's and Cursor's shape, each server disabled, nothing approved", () => {
        const claude = importMcpServers(CLAUDE_DESKTOP, []);
        expect(claude).toEqual([
            {name: "filesystem", enabled: false, callTimeoutSeconds: 60, alwaysAllow: [],
                launch: {transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"], env: {}, cwd: null}},
            {name: "github", enabled: false, callTimeoutSeconds: 60, alwaysAllow: [],
                launch: {transport: "stdio", command: "docker", args: ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"], env: {GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_x"}, cwd: null}}
        ]);
        expect(importMcpServers(LM_STUDIO, [])).toEqual([{name: "hf-mcp-server", enabled: false, callTimeoutSeconds: 60, alwaysAllow: [],
            launch: {transport: "http", url: "https://huggingface.co/mcp", headers: {Authorization: "Bearer hf_x"}}}]);
        // Cursor writes a "type"; a timeout (Cline's) is honoured as the call's time limit
        expect(importMcpServers(JSON.stringify({mcpServers: {remote: {type: "http", url: "http://127.0.0.1:3001/mcp", timeout: 30}}}), [])[0])
            .toMatchObject({launch: {transport: "http"}, callTimeoutSeconds: 30});
    });

    it.each([
        ["not JSON", "{mcpServers: nope}", /not JSON/],
        ["no mcpServers", JSON.stringify({servers: {}}), /no "mcpServers" object/],
        ["mcpServers a list", JSON.stringify({mcpServers: []}), /must be an object of server names/],
        ["empty", JSON.stringify({mcpServers: {}}), /is empty/],
        ["an auto-approval list", JSON.stringify({mcpServers: {a: {command: "x", autoApprove: ["rm"]}}}), /"mcpServers\.a" has a field this app does not read: "autoApprove"/],
        ["the old SSE transport", JSON.stringify({mcpServers: {a: {type: "sse", url: "http://x/sse"}}}), /older SSE transport/],
        ["a command and a URL", JSON.stringify({mcpServers: {a: {command: "x", url: "http://x"}}}), /not both/],
        ["neither", JSON.stringify({mcpServers: {a: {args: []}}}), /not neither/],
        ["a file: URL", JSON.stringify({mcpServers: {a: {url: "file:///etc/passwd"}}}), /http:\/\/ or https:\/\//],
        ["a header with a line break", JSON.stringify({mcpServers: {a: {url: "http://x", headers: {"X-A": "1\r\nX-Injected: 2"}}}}), /line break/],
        ["a __proto__ variable", '{"mcpServers": {"a": {"command": "x", "env": {"__proto__": "y"}}}}', /is not an environment variable's name/],
        ["a NUL in an argument", JSON.stringify({mcpServers: {a: {command: "x", args: ["a\u0000b"]}}}), /NUL/],
        ["a name with a slash", JSON.stringify({mcpServers: {"../etc": {command: "x"}}}), /"name" must be 1 to 64 letters/],
        ["args for a URL", JSON.stringify({mcpServers: {a: {url: "http://x", args: ["y"]}}}), /mean nothing for it/],
        ["a relative working folder", JSON.stringify({mcpServers: {a: {command: "x", cwd: "../up"}}}), /absolute path/],
        ["a timeout out of range", JSON.stringify({mcpServers: {a: {command: "x", timeout: 1e9}}}), /tool call time limit/],
        ["too many arguments", JSON.stringify({mcpServers: {a: {command: "x", args: Array.from({length: 65}, () => "a")}}}), /at most 64 strings/]
    ])("refuses %s in one sentence", (_what, text, reason) => {
        expect(() => importMcpServers(text, [])).toThrow(/^These servers cannot be imported: /);
        expect(() => importMcpServers(text, [])).toThrow(reason);
    });

    it("refuses a name that is configured already, and a file over the limit", () => {
        expect(() => importMcpServers(LM_STUDIO, ["hf-mcp-server"])).toThrow(/a server named "hf-mcp-server" is configured already/);
        expect(() => importMcpServers(" ".repeat(200_000), [])).toThrow(/longer than 131072 characters/);
    });
});

describe("tools.save requests", () => {
    it("are checked like every request: unknown fields, a shell-less command, bounds", () => {
        const ok = {config: liar("a")};
        expect(checkRequest("tools.save", ok)).toEqual(ok);
        expect(() => checkRequest("tools.save", {config: {...liar("a"), shell: true}})).toThrow(/unknown fields: "shell"/);
        expect(() => checkRequest("tools.save", {config: {...liar("a"), callTimeoutSeconds: 0}})).toThrow(/tool call time limit must be an integer from 1 to 600/);
        expect(() => checkRequest("tools.save", {config: {...liar("a"), launch: {transport: "stdio", command: " ", args: [], env: {}, cwd: null}}}))
            .toThrow(/must name the program/);
        expect(() => checkRequest("tools.save", {config: {...liar("a"), launch: {transport: "websocket", url: "ws://x"}}})).toThrow(/"stdio" or "http"/);
        expect(() => checkRequest("chat.decideTool", {streamId: "s", callId: "c", decision: "yes"})).toThrow(/approve, always, deny/);
    });

    it("a conversation's tools are checked: a known choice, each tool once, names as servers have them", () => {
        const settings = (tools: unknown) => checkRequest("conversations.setSettings", {id: "c", settings: {tools}});
        expect(settings({on: [{server: "files", tool: "read_file"}], choice: "required"}).settings.tools).toEqual({on: [{server: "files", tool: "read_file"}], choice: "required"});
        expect(() => settings({on: [], choice: "always"})).toThrow(/auto, required, none/);
        expect(() => settings({on: [{server: "a", tool: "t"}, {server: "a", tool: "t"}], choice: "auto"})).toThrow(/names a tool twice/);
        expect(() => settings({on: [{server: "a/b", tool: "t"}], choice: "auto"})).toThrow(/settings\.tools\.on\[0\]/);
        expect(() => settings({on: Array.from({length: 65}, (_, i) => ({server: "a", tool: `t${i}`})), choice: "auto"})).toThrow(/at most 64 tools/);
    });
});

describe("McpServers", () => {
    let dir: string;
    let servers: McpServers;
    let pushed: ToolServersState[];
    beforeEach(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-mcp-servers-"));
        pushed = [];
        servers = new McpServers(path.join(dir, "mcp-servers.json"), (state) => pushed.push(state));
    });
    afterEach(async () => {
        await servers.dispose();
        await rm(dir, {recursive: true, force: true});
    });

    it("an import adds its servers disabled and starts none; a restart reads the list back", async () => {
        const {added, state} = await servers.import(CLAUDE_DESKTOP);
        expect(added).toEqual(["filesystem", "github"]);
        expect(state.servers.map((server) => [server.config.name, server.config.enabled, server.status])).toEqual([["filesystem", false, "stopped"], ["github", false, "stopped"]]);
        await expect(servers.start("github")).rejects.toThrow(/"github" is disabled: enable it first/);
        const again = new McpServers(path.join(dir, "mcp-servers.json"), () => {});
        expect((await again.state()).servers.map((server) => server.config)).toEqual(state.servers.map((server) => server.config));
        await again.dispose();
    });

    it("a list edited by hand into something else is moved aside with a notice, and the list starts empty", async () => {
        await writeFile(path.join(dir, "mcp-servers.json"), JSON.stringify({version: 1, servers: [{...liar("a"), launch: {transport: "stdio", command: "x", args: "not a list"}}]}));
        const state = await servers.state();
        expect(state.servers).toEqual([]);
        expect(state.notices[0]).toMatch(/could not be read \("launch\.args" must be a list.*moved aside/);
        expect((await readdir(dir)).some((file) => file.startsWith("mcp-servers.unreadable-"))).toBe(true);
    });

    it("resolves a chat's tools by starting their server; Always for this tool is kept with the server", async () => {
        await servers.save(liar("liar"));
        expect((await servers.state()).servers[0]!.status).toBe("stopped");
        const resolved = await servers.resolve({on: [{server: "liar", tool: "echo"}], choice: "auto"});
        expect(resolved.tools).toEqual([{name: "echo", description: "Says the text back", parameters: expect.objectContaining({required: ["text"]})}]);
        expect((await servers.state()).servers[0]!.status).toBe("running");
        expect(servers.alwaysAllowed({server: "liar", tool: "echo"})).toBe(false);
        await servers.allowAlways({server: "liar", tool: "echo"});
        expect(servers.alwaysAllowed({server: "liar", tool: "echo"})).toBe(true);
        const file = JSON.parse(await readFile(path.join(dir, "mcp-servers.json"), "utf8")) as {servers: McpServerConfig[]};
        expect(file.servers[0]!.alwaysAllow).toEqual(["echo"]);
        await expect.poll(() => pushed.at(-1)?.servers[0]?.config.alwaysAllow).toEqual(["echo"]);
    }, 30_000);

    it("refuses by name what a chat turns on but cannot be offered", async () => {
        await servers.save(liar("liar"));
        await servers.save(liar("off", false));
        await servers.save({...liar("broken"), launch: {transport: "stdio", command: process.execPath, args: [LYING, "--fail-start"], env: {}, cwd: null}});
        await expect(servers.resolve({on: [{server: "gone", tool: "x"}], choice: "auto"})).rejects.toThrow(/"gone", which is not configured/);
        await expect(servers.resolve({on: [{server: "off", tool: "echo"}], choice: "auto"})).rejects.toThrow(/"off", which is disabled/);
        await expect(servers.resolve({on: [{server: "broken", tool: "echo"}], choice: "auto"}))
            .rejects.toMatchObject({code: "tool-server-failed", message: expect.stringMatching(/"broken" could not start.*cannot open its database/)});
        await expect(servers.resolve({on: [{server: "liar", tool: "nope"}], choice: "auto"})).rejects.toThrow(/no longer lists it/);
        await servers.save({...liar("liar2")});
        await expect(servers.resolve({on: [{server: "liar", tool: "echo"}, {server: "liar2", tool: "echo"}], choice: "auto"}))
            .rejects.toThrow(/both named "echo"/);
        // nothing in this list was started but what a chat asked for
        expect((await servers.state()).servers.find((server) => server.config.name === "off")!.status).toBe("stopped");
    }, 30_000);
});
