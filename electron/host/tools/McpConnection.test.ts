/**
 * One MCP server through McpConnection, with real server processes: the official server-everything over stdio and over
 * Streamable HTTP, and lyingMcpServer.mjs, each of whose tools is one way a server goes wrong. Every lie ends the call
 * with a sentence that says what happened, and the next call still works (restarting the server where the lie stopped
 * it); stopping ends the whole process group, SIGTERM ignored or not.
 */
import {spawn, type ChildProcess} from "node:child_process";
import {existsSync, readdirSync, readFileSync} from "node:fs";
import {mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, afterEach, beforeAll, describe, expect, it} from "vitest";
import {freePort} from "../../engine/testing/freePort.js";
import {DEFAULT_TOOL_CALL_SECONDS, MCP_MESSAGE_MAX_BYTES, TOOL_RESULT_KEPT_CHARS, type McpServerConfig, type McpServerLaunch} from "../../contract/tools.js";
import {GroupStdioTransport} from "./GroupStdioTransport.js";
import {guardianEntry, McpConnection, type CallOutcome} from "./McpConnection.js";
import {toolCallText} from "./toolCallText.js";

const LYING = path.resolve("electron/host/tools/testing/lyingMcpServer.mjs");
const EVERYTHING = path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const guardian = guardianEntry();
if (guardian == null)
    console.warn("[skip] the process-group tests of McpConnection: no built mcpGuardian.js (run `npm run build`), or not POSIX");

function config(name: string, launch: McpServerLaunch, callTimeoutSeconds = DEFAULT_TOOL_CALL_SECONDS): McpServerConfig {
    return {name, enabled: true, launch, callTimeoutSeconds, alwaysAllow: []};
}

const stdio = (script: string, args: string[] = [], env: Record<string, string> = {}): McpServerLaunch =>
    ({transport: "stdio", command: process.execPath, args: [script, ...args], env, cwd: null});

function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

async function gone(pids: number[], withinMs: number): Promise<number[]> {
    const started = Date.now();
    while (Date.now() - started < withinMs) {
        if (pids.every((pid) => !alive(pid)))
            return [];
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return pids.filter(alive);
}

const never = new AbortController().signal;
const errorOf = (outcome: CallOutcome): string => "error" in outcome ? outcome.error : `no error: ${JSON.stringify(outcome).slice(0, 200)}`;

describe("McpConnection with server-everything (stdio and Streamable HTTP)", () => {
    const opened: McpConnection[] = [];
    afterEach(async () => {
        await Promise.all(opened.splice(0).map((connection) => connection.stop()));
    });

    it("starts on demand over stdio, lists the tools with their schemas, calls one, and stops its process", async () => {
        const changes: string[] = [];
        const connection = new McpConnection(config("everything", stdio(EVERYTHING)), () => changes.push(connection.state().status));
        opened.push(connection);
        expect(connection.state().status).toBe("stopped");
        const outcome = await connection.call("echo", {message: "hello"}, never);
        expect(outcome).toMatchObject({result: {isError: false, parts: [{type: "text", text: "Echo: hello"}]}});
        const state = connection.state();
        expect(state.status).toBe("running");
        expect(state.serverInfo).toMatch(/everything/);
        expect(state.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]));
        expect(state.tools.find((tool) => tool.name === "echo")!.inputSchema).toMatchObject({type: "object", properties: {message: {type: "string"}}});
        expect(state.log.join("\n")).toMatch(/Starting default \(STDIO\) server/);
        expect(changes).toContain("running");
        const pid = state.pid!;
        expect(alive(pid)).toBe(true);
        await connection.stop();
        expect(connection.state().status).toBe("stopped");
        expect(await gone([pid], 5_000)).toEqual([]);
        // its tools stay listed, to choose from while it is stopped
        expect(connection.state().tools.length).toBeGreaterThan(5);
    }, 60_000);

    it("gives the server only the environment it was configured with (and PATH, HOME …), never the app's", async () => {
        process.env.TENSORWISE_TEST_SECRET = "do-not-leak";
        const connection = new McpConnection(config("env", stdio(EVERYTHING, [], {GIVEN: "yes"})), () => {});
        opened.push(connection);
        const outcome = await connection.call("get-env", {}, never);
        delete process.env.TENSORWISE_TEST_SECRET;
        const text = "result" in outcome ? toolCallText({id: "c", server: "env", tool: "get-env", arguments: "{}", state: "done", result: outcome.result}) : "";
        expect(text).toContain("GIVEN");
        expect(text).not.toContain("do-not-leak");
    }, 60_000);

    it("speaks Streamable HTTP to a server at a URL, with the configured headers", async () => {
        const port = await freePort();
        const server: ChildProcess = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {env: {...process.env, PORT: String(port)}, stdio: ["ignore", "ignore", "pipe"]});
        try {
            await new Promise<void>((resolve, reject) => {
                server.stderr!.on("data", (chunk: Buffer) => {
                    if (chunk.toString().includes("listening"))
                        resolve();
                });
                server.once("exit", () => reject(new Error("server-everything exited")));
            });
            const connection = new McpConnection(config("remote", {transport: "http", url: `http://127.0.0.1:${port}/mcp`, headers: {"X-Test": "1"}}), () => {});
            opened.push(connection);
            const outcome = await connection.call("get-sum", {a: 2, b: 3}, never);
            expect(outcome).toMatchObject({result: {parts: [{type: "text", text: expect.stringContaining("5")}]}});
            expect(connection.state()).toMatchObject({status: "running", pid: null});
        } finally {
            server.kill("SIGKILL");
        }
    }, 60_000);
});

describe("McpConnection with a lying server", () => {
    let connection: McpConnection;
    beforeAll(() => {
        connection = new McpConnection(config("liar", stdio(LYING), 15), () => {});
    });
    afterAll(async () => {
        await connection.stop();
    });

    it("a call that hangs fails at the time limit, named; the next call works", async () => {
        const quick = new McpConnection(config("liar-quick", stdio(LYING), 1), () => {});
        try {
            const outcome = await quick.call("hang", {}, never);
            expect(errorOf(outcome)).toBe("the server did not answer within 1 s (the call's time limit, set on the Tools screen).");
            expect(outcome.ms).toBeGreaterThanOrEqual(900);
            expect(await quick.call("echo", {text: "still here"}, never)).toMatchObject({result: {parts: [{text: "echo: still here"}]}});
        } finally {
            await quick.stop();
        }
    }, 30_000);

    it("a stop while a call hangs ends it at once as stopped", async () => {
        const slow = new McpConnection(config("liar-slow", stdio(LYING), 30), () => {});
        try {
            const controller = new AbortController();
            const call = slow.call("hang", {}, controller.signal);
            await new Promise((resolve) => setTimeout(resolve, 1_500));
            const stoppedAt = performance.now();
            controller.abort();
            expect(await call).toMatchObject({stopped: true});
            expect(performance.now() - stoppedAt).toBeLessThan(500);
        } finally {
            await slow.stop();
        }
    }, 30_000);

    it("a line that is not JSON fails the call at once, not at the time limit", async () => {
        const patient = new McpConnection(config("liar-patient", stdio(LYING), 30), () => {});
        try {
            const outcome = await patient.call("not_json", {}, never);
            expect(errorOf(outcome)).toMatch(/^the server wrote something that is not an MCP message \(.*JSON/);
            expect(outcome.ms).toBeLessThan(10_000);
        } finally {
            await patient.stop();
        }
    }, 30_000);

    it("an answer that is not an MCP tool result, or breaks its own output schema, is named as such", async () => {
        expect(errorOf(await connection.call("bad_result", {}, never))).toMatch(/^the server's answer is not a valid MCP tool result/);
        expect(errorOf(await connection.call("bad_structured", {}, never))).toMatch(/does not match its own output schema/);
        expect(errorOf(await connection.call("no_such_tool", {}, never))).toBe("the server refused: no tool named no_such_tool");
    }, 30_000);

    it("10 MiB on one line stops the server with the reason; the next call starts it again", async () => {
        const outcome = await connection.call("huge", {}, never);
        expect(errorOf(outcome)).toBe("the server answered with more than 8 MiB, so the app stopped it.");
        await expect.poll(() => connection.state().status).toBe("failed");
        expect(connection.state().error).toMatch(/more than 8 MiB/);
        expect(await connection.call("echo", {text: "back"}, never)).toMatchObject({result: {parts: [{text: "echo: back"}]}});
    }, 30_000);

    it("a crash during a call fails it with the server's last words, and the state says it stopped", async () => {
        const outcome = await connection.call("crash", {}, never);
        expect(errorOf(outcome)).toMatch(/^the server stopped before it answered; its last words: "lying server: crashing on purpose"/);
        await expect.poll(() => connection.state().status).toBe("failed");
        expect(connection.state().error).toMatch(/stopped unexpectedly/);
    }, 30_000);

    it("a large answer is kept capped and said to be; the model is given less still", async () => {
        const outcome = await connection.call("big", {}, never);
        if (!("result" in outcome))
            throw new Error(errorOf(outcome));
        const kept = outcome.result.parts.map((part) => part.type === "text" ? part.text : "").join("");
        expect(kept.length).toBe(TOOL_RESULT_KEPT_CHARS);
        expect(outcome.result.capped).toBe("200,000 characters of text, cut to 65,536 characters");
        const text = toolCallText({id: "c", server: "liar", tool: "big", arguments: "{}", state: "done", result: outcome.result});
        expect(text.length).toBeLessThan(8_200);
        expect(text).toMatch(/was cut/);
    }, 30_000);

    it("markup stays text, a PNG is kept, an SVG is left out with a note, isError is kept", async () => {
        const html = await connection.call("html", {}, never);
        expect(html).toMatchObject({result: {parts: [{type: "text", text: expect.stringContaining("<script>")}]}});
        const images = await connection.call("images", {}, never);
        expect(images).toMatchObject({result: {parts: [{type: "image", mimeType: "image/png"}, {type: "note", text: expect.stringMatching(/image\/svg\+xml.*only PNG, JPEG, GIF and WebP/)}]}});
        expect(await connection.call("failing", {}, never)).toMatchObject({result: {isError: true, parts: [{text: "the disk is on fire"}]}});
    }, 30_000);

    it("a changed tool list is listed again", async () => {
        await connection.call("add_tool", {}, never);
        await expect.poll(() => connection.state().tools.map((tool) => tool.name), {timeout: 5_000}).toContain("added");
    }, 30_000);
});

describe("McpConnection when a server cannot start", () => {
    it("says why: the program's own words, a tool list that is not MCP, a program that does not exist", async () => {
        const failing = new McpConnection(config("db", stdio(LYING, ["--fail-start"])), () => {});
        await expect(failing.start()).rejects.toThrow(/^The server could not start: the server stopped before it answered; its last words: "lying server: cannot open its database/);
        expect(failing.state()).toMatchObject({status: "failed", error: expect.stringMatching(/cannot open its database/)});
        expect(failing.state().log.some((line) => line.includes("cannot open its database"))).toBe(true);

        const badList = new McpConnection(config("list", stdio(LYING, ["--bad-tool-list"])), () => {});
        await expect(badList.start()).rejects.toThrow(/not a valid MCP message/);
        await badList.stop();

        const missing = new McpConnection(config("missing", {transport: "stdio", command: "tensorwise-no-such-program", args: [], env: {}, cwd: null}), () => {});
        await expect(missing.start()).rejects.toThrow(/tensorwise-no-such-program/);
        expect(missing.state().status).toBe("failed");
    }, 60_000);
});

describe.skipIf(guardian == null)("a stdio server's process group (mcpGuardian.ts)", () => {
    let dir: string;
    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-mcp-"));
    });
    afterAll(async () => {
        await rm(dir, {recursive: true, force: true});
    });
    const pidsIn = async (file: string): Promise<number[]> => {
        await expect.poll(() => existsSync(file) && readFileSync(file, "utf8").trim().split("\n").length === 2, {timeout: 10_000}).toBe(true);
        return readFileSync(file, "utf8").trim().split("\n").map(Number);
    };

    it("a stop ends the server and what it started, SIGTERM ignored", async () => {
        const pidFile = path.join(dir, "stop.pids");
        const connection = new McpConnection(config("stubborn", stdio(LYING, ["--ignore-term", "--spawn-child", "--pid-file", pidFile])), () => {});
        await connection.start();
        const pids = await pidsIn(pidFile);
        expect(pids.every(alive)).toBe(true);
        await connection.stop();
        expect(await gone(pids, 8_000)).toEqual([]);
    }, 30_000);

    it("when the app is killed (SIGKILL), the server and what it started end within seconds", async () => {
        const pidFile = path.join(dir, "kill.pids");
        // an "app" that starts the guardian as McpConnection does and then is killed without a chance to clean up
        const app = spawn(process.execPath, ["-e", `require("node:child_process").spawn(process.execPath, ${JSON.stringify([guardian, process.execPath, LYING, "--ignore-term",
            "--spawn-child", "--pid-file", pidFile])}, {stdio: ["pipe", "pipe", "inherit"]}); setInterval(() => {}, 1000);`], {stdio: "ignore"});
        const pids = await pidsIn(pidFile);
        expect(pids.every(alive)).toBe(true);
        app.kill("SIGKILL");
        expect(await gone(pids, 5_000)).toEqual([]);
    }, 30_000);
});

/** Processes whose command line holds `text` (Linux: /proc). */
function processesWith(text: string): number[] {
    return readdirSync("/proc").filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid).filter((entry) => {
        try {
            return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text);
        } catch {
            return false;
        }
    }).map(Number);
}

// in Electron no Node runs mcpGuardian.ts: the server gets a process group of its own and a /bin/sh watchdog
describe.skipIf(process.platform === "win32")("a stdio server's process group where no guardian runs (GroupStdioTransport.ts, as in Electron)", () => {
    let dir: string;
    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-mcp-group-"));
    });
    afterAll(async () => {
        await rm(dir, {recursive: true, force: true});
    });
    const pidsIn = async (file: string): Promise<number[]> => {
        await expect.poll(() => existsSync(file) && readFileSync(file, "utf8").trim().split("\n").length === 2, {timeout: 10_000}).toBe(true);
        return readFileSync(file, "utf8").trim().split("\n").map(Number);
    };

    it("serves calls; a stop ends the server and what it started, SIGTERM ignored, and its watchdog with them", async () => {
        const pidFile = path.join(dir, "stop.pids");
        const connection = new McpConnection(config("stubborn", stdio(LYING, ["--ignore-term", "--spawn-child", "--pid-file", pidFile])), () => {}, null);
        await connection.start();
        const pids = await pidsIn(pidFile);
        expect(connection.state().pid, "the card shows the server's own pid").toBe(pids[0]);
        expect(await connection.call("echo", {text: "hi"}, never)).toMatchObject({result: {parts: [{type: "text", text: "echo: hi"}]}});
        const watchdog = () => process.platform === "linux" ? processesWith(`tensorwise-mcp-watchdog\0${process.pid}\0${pids[0]}\0`) : [];
        if (process.platform === "linux")
            expect(watchdog()).toHaveLength(1);
        await connection.stop();
        expect(await gone(pids, 15_000)).toEqual([]);
        await expect.poll(watchdog, {timeout: 15_000}).toEqual([]);
    }, 60_000);

    it("when the app is killed (SIGKILL), the server and what it started end", async () => {
        const pidFile = path.join(dir, "kill.pids");
        // a stand-in for the app, whose pid the watchdog watches; the server is started here as McpConnection does
        const app = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {stdio: "ignore"});
        const transport = new GroupStdioTransport({command: process.execPath, args: [LYING, "--ignore-term", "--spawn-child", "--pid-file", pidFile],
            env: {}, cwd: null, maxBufferSize: MCP_MESSAGE_MAX_BYTES, appPid: app.pid!});
        await transport.start();
        const pids = await pidsIn(pidFile);
        expect(pids.every(alive)).toBe(true);
        app.kill("SIGKILL");
        // SIGTERM is ignored by both: only the watchdog's SIGKILL to the group ends them
        expect(await gone(pids, 20_000)).toEqual([]);
        await transport.close();
    }, 60_000);
});
