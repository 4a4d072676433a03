import {promises as fs} from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it, vi} from "vitest";
import {parseEventEnvelope} from "../contract/envelope.js";
import {isEventName} from "../contract/requestNames.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import type {HostClient} from "../host/HostContext.js";
import {CONTENT_SECURITY_POLICY, serveWeb, type WebServer} from "./serveWeb.js";

// The transport is under test here, not the engine: the host answers with what it was asked.
const attached: HostClient[] = [];
const host = {
    attach(client: HostClient) {
        attached.push(client);
        return () => attached.splice(attached.indexOf(client), 1);
    },
    async handle(name: string, arg: unknown, client: HostClient) {
        return {name, arg, clientId: client.id};
    },
    async benchExportFile(id: string, format: string) {
        if (id !== "bench-1" || format !== "csv")
            throw new TensorwiseError("not-found", `no ${format} for ${id}`);
        return {path: path.join(dir, "report.csv"), fileName: "tensorwise-bench-tiny-20250101-1200.csv"};
    }
};

let dir: string;
let server: WebServer;

function rawRequest(options: {method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer}): Promise<{status: number; headers: http.IncomingHttpHeaders; body: string}> {
    return new Promise((resolve, reject) => {
        const request = http.request({host: "127.0.0.1", port: server.port, method: options.method ?? "GET", path: options.path,
            headers: {host: `127.0.0.1:${server.port}`, ...options.headers}}, (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => body += chunk);
            response.on("end", () => resolve({status: response.statusCode ?? 0, headers: response.headers, body}));
        });
        request.on("error", reject);
        request.end(options.body);
    });
}

/** Opens the event stream and resolves with the client id of its `hello` event; `received` collects what follows. */
function openEvents(): Promise<{clientId: string; close: () => void; received: () => string}> {
    return new Promise((resolve, reject) => {
        let text = "";
        let closing = false;
        // closing the stream on purpose resets the socket: a read ECONNRESET (or "aborted") is then the expected end
        const onError = (error: Error) => {
            if (!closing) reject(error);
        };
        const request = http.get({host: "127.0.0.1", port: server.port, path: `/api/events?token=${server.token}`}, (response) => {
            response.on("error", onError);
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => {
                text += chunk;
                const match = /event: hello\ndata: (.*)\n\n/.exec(chunk);
                if (match?.[1] != null)
                    resolve({clientId: (JSON.parse(match[1]) as {clientId: string}).clientId, close: () => {
                        closing = true;
                        request.destroy();
                    },
                        received: () => text.slice(text.indexOf(match[0]) + match[0].length)});
            });
        });
        request.on("error", onError);
    });
}

beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-web-"));
    await fs.mkdir(path.join(dir, "renderer/assets"), {recursive: true});
    await fs.writeFile(path.join(dir, "renderer/index.html"), "<!doctype html><title>t</title>");
    await fs.writeFile(path.join(dir, "renderer/assets/app.js"), "console.log(1)");
    await fs.writeFile(path.join(dir, "secret.txt"), "outside");
    await fs.writeFile(path.join(dir, "report.csv"), "budget,variant\n50%,optimal\n");
    // what a server killed mid-upload leaves behind
    await fs.mkdir(path.join(dir, "data/models"), {recursive: true});
    await fs.writeFile(path.join(dir, "data/models/.killed.gguf.1a2b3c4d.partial"), "half a model");
    await fs.writeFile(path.join(dir, "data/models/kept.gguf"), "a model");
    server = await serveWeb({host, rendererDir: path.join(dir, "renderer"), dataDir: path.join(dir, "data")});
});
afterAll(async () => {
    await server.close();
    await fs.rm(dir, {recursive: true, force: true});
});

describe("serveWeb", () => {
    it("serves a benchmark report as an attachment, only with the token", async () => {
        const download = await rawRequest({path: `/api/bench/bench-1/csv?token=${server.token}`});
        expect(download.status).toBe(200);
        expect(download.headers["content-disposition"]).toBe('attachment; filename="tensorwise-bench-tiny-20250101-1200.csv"');
        expect(download.headers["content-type"]).toContain("text/csv");
        expect(download.body).toBe("budget,variant\n50%,optimal\n");
        expect((await rawRequest({path: "/api/bench/bench-1/csv", headers: {authorization: `Bearer ${server.token}`}})).status).toBe(200);
        expect((await rawRequest({path: "/api/bench/bench-1/csv"})).status).toBe(401);
        expect((await rawRequest({path: `/api/bench/bench-1/csv?token=wrong${server.token}`})).status).toBe(401);
        expect((await rawRequest({path: `/api/bench/bench-2/csv?token=${server.token}`})).status).toBe(404);
        expect((await rawRequest({path: `/api/bench/bench-1/csv/x?token=${server.token}`})).status).toBe(404);
    });

    it("removes uploads left unfinished by an earlier server when it starts, and keeps finished models", async () => {
        const left = await fs.readdir(path.join(dir, "data/models"));
        expect(left).toContain("kept.gguf");
        expect(left.filter((name) => name.endsWith(".partial"))).toEqual([]);
    });

    it("listens on 127.0.0.1 with a token in the URL fragment", () => {
        expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${server.port}/#token=[A-Za-z0-9_-]{20,}$`));
    });

    it("serves the renderer with a strict CSP and refuses paths outside it", async () => {
        const index = await rawRequest({path: "/"});
        expect(index.status).toBe(200);
        expect(index.headers["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
        expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
        expect(CONTENT_SECURITY_POLICY).not.toContain("unsafe");
        expect((await rawRequest({path: "/assets/app.js"})).headers["content-type"]).toContain("text/javascript");
        expect((await rawRequest({path: "/../secret.txt"})).status).toBe(404);
        expect((await rawRequest({path: "/%2e%2e/secret.txt"})).status).toBe(404);
    });

    it("answers only the loopback Host names (DNS rebinding)", async () => {
        expect((await rawRequest({path: "/", headers: {host: "evil.example:80"}})).status).toBe(421);
        expect((await rawRequest({path: "/", headers: {host: `attacker.test:${server.port}`}})).status).toBe(421);
        expect((await rawRequest({path: "/", headers: {host: `localhost:${server.port}`}})).status).toBe(200);
    });

    it("requires the token on every API call", async () => {
        const none = await rawRequest({method: "POST", path: "/api/request/engine.state", body: "{}"});
        expect(none.status).toBe(401);
        const wrong = await rawRequest({method: "POST", path: "/api/request/engine.state", body: "{}", headers: {authorization: "Bearer nope"}});
        expect(wrong.status).toBe(401);
        expect((await rawRequest({path: "/api/events?token=nope"})).status).toBe(401);
    });

    describe("from the attacker's side", () => {
        const requestPath = "/api/request/engine.state";
        /** Wrong tokens of every shape, the same length as the right one included. */
        const wrongTokens = (): [string, string][] => {
            const token = server.token;
            const flipped = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
            return [
                ["same length, last character changed", flipped],
                ["same length, first character changed", (token.startsWith("A") ? "B" : "A") + token.slice(1)],
                ["same length, all one character", "A".repeat(token.length)],
                ["one character short", token.slice(0, -1)],
                ["one character more", token + "A"],
                ["the token twice", token + token],
                ["empty", ""],
                ["upper-cased", token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase()],
                // the same number of characters but not of bytes: compared as bytes, never as a prefix
                ["same length in characters, multi-byte", "é".repeat(token.length)]
            ];
        };

        it("refuses every shape of wrong token, in the header and on the event stream", async () => {
            for (const [shape, wrong] of wrongTokens()) {
                const header = await rawRequest({method: "POST", path: requestPath, body: "{}", headers: {authorization: `Bearer ${wrong}`}});
                expect(header.status, shape).toBe(401);
                expect(JSON.parse(header.body), shape).toMatchObject({ok: false, error: {code: "bad-token"}});
                const events = await rawRequest({path: `/api/events?token=${encodeURIComponent(wrong)}`});
                expect(events.status, shape).toBe(401);
                const download = await rawRequest({path: `/api/bench/bench-1/csv?token=${encodeURIComponent(wrong)}`});
                expect(download.status, shape).toBe(401);
            }
            // other schemes and spellings of the header
            for (const authorization of [`bearer ${server.token}`, `Basic ${server.token}`, `Bearer  ${server.token}`, server.token])
                expect((await rawRequest({method: "POST", path: requestPath, body: "{}", headers: {authorization}})).status, authorization).toBe(401);
        });

        it("refuses the right token in the URL on every route but the event stream and downloads", async () => {
            const events = await openEvents();
            try {
                const headers = {"x-tensorwise-client": events.clientId, "content-type": "application/json"};
                const inQuery = await rawRequest({method: "POST", path: `${requestPath}?token=${server.token}`, body: "{}", headers});
                expect(inQuery.status).toBe(401);
                expect(JSON.parse(inQuery.body)).toMatchObject({ok: false, error: {code: "bad-token", message: expect.stringContaining("Authorization header")}});
                // not even beside the right header: a token in a URL is refused wherever it is not needed
                const both = await rawRequest({method: "POST", path: `${requestPath}?token=${server.token}`, body: "{}",
                    headers: {...headers, authorization: `Bearer ${server.token}`}});
                expect(both.status).toBe(401);
                const upload = await rawRequest({method: "PUT", path: `/api/upload?name=q.gguf&token=${server.token}`, body: "GGUF"});
                expect(upload.status).toBe(401);
                await expect(fs.stat(path.join(dir, "data/models/q.gguf"))).rejects.toMatchObject({code: "ENOENT"});
                // where a URL must carry it, it still works
                expect((await rawRequest({path: `/api/bench/bench-1/csv?token=${server.token}`})).status).toBe(200);
            } finally {
                events.close();
            }
        });

        it("answers only the exact loopback Host names", async () => {
            for (const host of [`127.0.0.1:${server.port}.`, `127.0.0.1.:${server.port}`, `LOCALHOST:${server.port}`, `[::1]:${server.port}`,
                `127.0.0.2:${server.port}`, `0.0.0.0:${server.port}`, "127.0.0.1", `127.0.0.1:${server.port + 1}`, `localhost.evil.example:${server.port}`])
                expect((await rawRequest({path: "/", headers: {host}})).status, host).toBe(421);
        });

        it("refuses every foreign or odd Origin, even with the right token", async () => {
            const headers = {authorization: `Bearer ${server.token}`};
            for (const origin of ["null", `http://localhost:${server.port}`, `https://127.0.0.1:${server.port}`, `http://127.0.0.1:${server.port}/`,
                `http://127.0.0.1:${server.port}.evil.example`, `http://127.0.0.1:${server.port + 1}`, "http://127.0.0.1", ""])
                expect((await rawRequest({method: "POST", path: requestPath, body: "{}", headers: {...headers, origin}})).status, origin).toBe(403);
        });

        it("refuses upload names that would hide what they are, with the name shown safely", async () => {
            const auth = {authorization: `Bearer ${server.token}`};
            for (const name of ["x\u202Efuug.gguf", "a\u007f.gguf", "a\u0085.gguf", "a\u200b.gguf", "a\u2066b\u2069.gguf", "a\u0000.gguf"]) {
                const response = await rawRequest({method: "PUT", path: `/api/upload?name=${encodeURIComponent(name)}`, headers: auth, body: "GGUF"});
                expect(response.status, JSON.stringify(name)).toBe(400);
                expect(JSON.parse(response.body).error.message, JSON.stringify(name)).not.toMatch(/[\p{Cc}\p{Cf}]/u);
            }
            expect((await fs.readdir(path.join(dir, "data/models"))).filter((entry) => entry.includes("\u202E"))).toEqual([]);
        });
    });

    it("refuses cross-origin calls even with the token", async () => {
        const response = await rawRequest({method: "POST", path: "/api/request/engine.state", body: "{}",
            headers: {authorization: `Bearer ${server.token}`, origin: "http://evil.example"}});
        expect(response.status).toBe(403);
    });

    it("routes a request to the host for the client of the event stream", async () => {
        const events = await openEvents();
        try {
            expect(attached.some((client) => client.id === events.clientId)).toBe(true);
            const headers = {authorization: `Bearer ${server.token}`, "x-tensorwise-client": events.clientId, "content-type": "application/json"};
            const ok = await rawRequest({method: "POST", path: "/api/request/conversations.get", headers, body: JSON.stringify({arg: {id: "abc"}})});
            expect(JSON.parse(ok.body)).toEqual({ok: true, result: {name: "conversations.get", arg: {id: "abc"}, clientId: events.clientId}});
            const unknown = await rawRequest({method: "POST", path: "/api/request/fs.readFile", headers, body: "{}"});
            expect(JSON.parse(unknown.body)).toMatchObject({ok: false, error: {code: "unknown-request"}});
            const badJson = await rawRequest({method: "POST", path: "/api/request/engine.state", headers, body: "{"});
            expect(JSON.parse(badJson.body)).toMatchObject({ok: false, error: {code: "bad-request"}});
        } finally {
            events.close();
        }
    });

    it("carries a conversation import larger than other requests may be, and still refuses a larger body of any other request", async () => {
        const events = await openEvents();
        try {
            const headers = {authorization: `Bearer ${server.token}`, "x-tensorwise-client": events.clientId, "content-type": "application/json"};
            // 3 MiB of text, every character escaped in the body: what a long chat's export can be
            const text = "\"".repeat(3 * 1024 * 1024);
            const body = JSON.stringify({arg: {text}});
            const imported = await rawRequest({method: "POST", path: "/api/request/conversations.import", headers, body});
            expect((JSON.parse(imported.body) as {result: {arg: {text: string}}}).result.arg.text).toBe(text);
            const other = await rawRequest({method: "POST", path: "/api/request/conversations.search", headers, body: JSON.stringify({arg: {query: text}})});
            expect(JSON.parse(other.body)).toMatchObject({ok: false, error: {code: "too-large"}});
            // the refused body is still arriving: the connection is closed, not handed to the next request (which then
            // waited ~5 s for a reset)
            expect(other.headers.connection).toBe("close");
        } finally {
            events.close();
        }
    });

    it("pushes each event as one data line holding the contract's event envelope, which the web transport reads back", async () => {
        const events = await openEvents();
        try {
            const client = attached.find((c) => c.id === events.clientId)!;
            client.emit("chat.delta", {streamId: "s1", text: "Hel", elapsedMs: 12, tokens: 1} as never);
            await new Promise((resolve) => setTimeout(resolve, 100));
            const block = events.received();
            expect(block).toMatch(/^data: .*\n\n$/);
            expect(parseEventEnvelope(block.slice("data: ".length), isEventName))
                .toEqual({kind: "event", name: "chat.delta", payload: {streamId: "s1", text: "Hel", elapsedMs: 12, tokens: 1}});
            expect(parseEventEnvelope(JSON.stringify({kind: "event", name: "fs.readFile", payload: 1}), isEventName)).toBeNull();
            expect(parseEventEnvelope("{", isEventName)).toBeNull();
        } finally {
            events.close();
        }
    });

    it("detaches the client when its event stream goes away", async () => {
        const events = await openEvents();
        expect(attached.some((client) => client.id === events.clientId)).toBe(true);
        events.close();
        // the server learns of the close when the socket does: wait for it rather than guess how long it takes
        await vi.waitFor(() => expect(attached.some((client) => client.id === events.clientId)).toBe(false),
            {timeout: 5000, interval: 20});
    });

    it("survives requests that used to end the process, then serves a normal request", async () => {
        const auth = {authorization: `Bearer ${server.token}`};
        // each of these threw outside any handler (ERR_INVALID_URL, URIError) and took the whole server down
        expect((await rawRequest({path: "//[x"})).status).toBe(400);
        expect((await rawRequest({path: "//[x", headers: auth})).status).toBe(400);
        expect((await rawRequest({path: "/%E0%A4%A"})).status).toBe(400);
        const badName = await rawRequest({method: "POST", path: "/api/request/%E0%A4%A", headers: auth, body: "{}"});
        expect(JSON.parse(badName.body)).toMatchObject({ok: false, error: {code: "bad-request"}});
        expect((await rawRequest({path: `/api/bench/%E0%A4%A/csv?token=${server.token}`})).status).toBe(400);
        // a request line Node itself cannot parse
        const raw = await new Promise<string>((resolve) => {
            const socket = net.connect(server.port, "127.0.0.1", () => socket.write("GET /\u0000 HTTP/1.1\r\n\r\n"));
            let text = "";
            socket.on("data", (chunk) => text += String(chunk));
            socket.on("close", () => resolve(text));
            socket.on("error", () => resolve(text));
        });
        expect(raw).toMatch(/^HTTP\/1\.1 400/);

        expect((await rawRequest({path: "/"})).status).toBe(200);
        const events = await openEvents();
        try {
            const headers = {...auth, "x-tensorwise-client": events.clientId};
            const ok = await rawRequest({method: "POST", path: "/api/request/engine.state", headers, body: "{}"});
            expect(JSON.parse(ok.body)).toMatchObject({ok: true});
        } finally {
            events.close();
        }
    });

    describe("upload", () => {
        const auth = () => ({authorization: `Bearer ${server.token}`});

        it("stores a .gguf under <dataDir>/models", async () => {
            const body = Buffer.from("GGUF-bytes");
            const response = await rawRequest({method: "PUT", path: "/api/upload?name=m.gguf", headers: auth(), body});
            const parsed = JSON.parse(response.body) as {ok: true; result: {path: string; bytes: number}};
            expect(parsed.ok).toBe(true);
            expect(parsed.result.path).toBe(path.join(dir, "data/models/m.gguf"));
            expect(await fs.readFile(parsed.result.path)).toEqual(body);
        });

        it("refuses non-.gguf names and path traversal", async () => {
            for (const name of ["notes.txt", "../escape.gguf", "..%2Fescape.gguf", "a/b.gguf", "a\\b.gguf", ".hidden.gguf"]) {
                const response = await rawRequest({method: "PUT", path: `/api/upload?name=${name}`, headers: auth(), body: "x"});
                expect(response.status, name).toBe(400);
                expect(JSON.parse(response.body).error.code).toBe("bad-name");
            }
            await expect(fs.stat(path.join(dir, "data/escape.gguf"))).rejects.toThrow();
        });

        it("refuses an upload larger than the free disk space with a clear message", async () => {
            const response = await rawRequest({method: "PUT", path: "/api/upload?name=huge.gguf",
                headers: {...auth(), "content-length": String(2 ** 52)}, body: ""}).catch(() => null);
            // the server answers before reading the body
            expect(response?.status).toBe(507);
            expect(JSON.parse(response!.body).error.message).toMatch(/Not enough disk space/);
        });

        it("deletes the partial file when the upload is cut off", async () => {
            const socket = net.connect(server.port, "127.0.0.1");
            await new Promise((resolve) => socket.once("connect", resolve));
            socket.write(`PUT /api/upload?name=cut.gguf HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\nContent-Length: 1000000\r\n\r\n`);
            socket.write(Buffer.alloc(4096, 1));
            await new Promise((resolve) => setTimeout(resolve, 150));
            socket.destroy();
            await new Promise((resolve) => setTimeout(resolve, 200));
            const left = await fs.readdir(path.join(dir, "data/models"));
            expect(left.filter((name) => name.includes("cut"))).toEqual([]);
        });
    });
});
