#!/usr/bin/env node
/**
 * A real MCP server over stdio for tests, written on raw JSON-RPC (not the SDK) so that it can lie: each tool is one
 * way a server goes wrong — it hangs, crashes, writes what is not JSON, answers with what is not an MCP result,
 * answers 10 MiB on one line, answers a schema violation of its own output schema, returns markup meant to run as
 * HTML, or images of kinds the app may and may not show. Flags change how it starts: `--fail-start` (a message on
 * stderr, then exit 1), `--bad-tool-list` (a tool whose schema is not an object), `--ignore-term` (SIGTERM
 * and the end of its stdin ignored: only SIGKILL ends it), `--spawn-child` (starts a grandchild that sleeps, as `npx` leaves a second Node), `--pid-file
 * FILE` (writes its pid, and the grandchild's on a second line), `--marker TEXT` (only to be found in `ps`).
 */
import {spawn} from "node:child_process";
import {appendFileSync, writeFileSync} from "node:fs";

const flags = process.argv.slice(2);
const flagValue = (name) => {
    const at = flags.indexOf(name);
    return at >= 0 ? flags[at + 1] : undefined;
};

if (flags.includes("--fail-start")) {
    process.stderr.write("lying server: cannot open its database /nonexistent/db.sqlite\n");
    process.exit(1);
}
if (flags.includes("--ignore-term"))
    process.on("SIGTERM", () => process.stderr.write("lying server: ignoring SIGTERM\n"));
const pidFile = flagValue("--pid-file");
if (pidFile != null)
    writeFileSync(pidFile, `${process.pid}\n`);
if (flags.includes("--spawn-child")) {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "--", "lying-grandchild", flagValue("--marker") ?? ""], {stdio: "ignore"});
    if (pidFile != null)
        appendFileSync(pidFile, `${child.pid}\n`);
}
// a stubborn server also stays up when its stdin closes, as some do (the guardian, not the stdin, must end it)
if (flags.includes("--ignore-term"))
    setInterval(() => {}, 60_000);

/** A 1×1 transparent PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const SVG = Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>").toString("base64");
const empty = {type: "object", properties: {}};

const tools = [
    {name: "echo", description: "Says the text back", inputSchema: {type: "object", properties: {text: {type: "string", maxLength: 20}}, required: ["text"]}},
    {name: "hang", description: "Never answers", inputSchema: empty},
    {name: "crash", description: "Exits while answering", inputSchema: empty},
    {name: "not_json", description: "Writes a line that is not JSON instead of answering", inputSchema: empty},
    {name: "bad_result", description: "Answers with content that is not a list", inputSchema: empty},
    {name: "huge", description: "Answers 10 MiB on one line", inputSchema: empty},
    {name: "big", description: "Answers 200,000 characters", inputSchema: empty},
    {name: "html", description: "Answers markup that would run as HTML", inputSchema: empty},
    {name: "images", description: "Answers a PNG and an SVG", inputSchema: empty},
    {name: "failing", description: "Answers with isError", inputSchema: empty},
    {name: "bad_structured", description: "Breaks its own output schema", inputSchema: empty,
        outputSchema: {type: "object", properties: {n: {type: "number"}}, required: ["n"]}},
    {name: "add_tool", description: "Adds a tool and says its list changed", inputSchema: empty}
];
if (flags.includes("--bad-tool-list"))
    tools.push({name: "broken", inputSchema: "banana"});

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const answer = (id, result) => send({jsonrpc: "2.0", id, result});
const text = (value) => ({content: [{type: "text", text: value}]});

function call(id, name, args) {
    switch (name) {
        case "echo": return answer(id, text(`echo: ${args?.text ?? ""}`));
        case "hang": return undefined;
        case "crash":
            process.stderr.write("lying server: crashing on purpose\n");
            return process.exit(3);
        case "not_json": return process.stdout.write("this line is not JSON at all\n");
        case "bad_result": return answer(id, {content: "banana"});
        case "huge": return answer(id, text("x".repeat(10 * 1024 * 1024)));
        case "big": return answer(id, text("y".repeat(200_000)));
        case "html": return answer(id, text("<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script><b>bold?</b>"));
        case "images": return answer(id, {content: [{type: "image", data: PNG, mimeType: "image/png"}, {type: "image", data: SVG, mimeType: "image/svg+xml"}]});
        case "failing": return answer(id, {content: [{type: "text", text: "the disk is on fire"}], isError: true});
        case "bad_structured": return answer(id, {content: [{type: "text", text: "n is x"}], structuredContent: {n: "x"}});
        case "add_tool":
            if (!tools.some((tool) => tool.name === "added"))
                tools.push({name: "added", description: "Came later", inputSchema: empty});
            answer(id, text("added"));
            return send({jsonrpc: "2.0", method: "notifications/tools/list_changed"});
        default: return send({jsonrpc: "2.0", id, error: {code: -32602, message: `no tool named ${name}`}});
    }
}

let buffer = "";
process.stdin.on("data", (chunk) => {
    buffer += chunk.toString("utf8");
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim() === "")
            continue;
        const message = JSON.parse(line);
        if (message.id == null)
            continue;
        if (message.method === "initialize")
            answer(message.id, {protocolVersion: message.params.protocolVersion, capabilities: {tools: {listChanged: true}},
                serverInfo: {name: "lying-server", version: "1.0.0"}});
        else if (message.method === "tools/list")
            answer(message.id, {tools});
        else if (message.method === "tools/call")
            call(message.id, message.params.name, message.params.arguments);
        else if (message.method === "ping")
            answer(message.id, {});
        else
            send({jsonrpc: "2.0", id: message.id, error: {code: -32601, message: `no method ${message.method}`}});
    }
});
