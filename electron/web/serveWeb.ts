/**
 * Web mode: the renderer and the contract served on 127.0.0.1 for a browser, where no Electron binary exists.
 * - Only `Host: 127.0.0.1:<port>` / `localhost:<port>` is answered (DNS-rebinding defence).
 * - Every API call carries the per-launch token in `Authorization: Bearer …`. Only the two routes a browser opens
 *   without headers take it as `?token=` instead: the event stream (`EventSource` cannot send headers) and a report
 *   download (a plain link); anywhere else a token in the URL is refused, so it is not left in history or logs for
 *   requests that never needed it. The page gets it from the URL fragment, which never reaches a server log.
 * - Requests: `POST /api/request/<name>` with `{"arg": …}`, answered with a `Reply`; events: Server-Sent Events on
 *   `GET /api/events`, first `event: hello` with the client id, then one `data:` line per event holding its
 *   `EventEnvelope` (both in electron/contract/envelope.ts).
 * - Model upload (drag-and-drop in a browser): `PUT /api/upload?name=x.gguf` streams the body to `<dataDir>/models/`.
 * - Benchmark report download: `GET /api/bench/<id>/<html|csv|json>` (`?token=` works, for a plain link) answers the
 *   file as an attachment.
 */
import {randomBytes, randomUUID, timingSafeEqual} from "node:crypto";
import {createReadStream, promises as fs} from "node:fs";
import http from "node:http";
import type {AddressInfo} from "node:net";
import path from "node:path";
import {pipeline} from "node:stream/promises";
import {eventEnvelope, type Reply} from "../contract/envelope.js";
import type {EventName, Events, RequestName} from "../contract/ipc.js";
import {CONVERSATION_IMPORT_MAX_CHARS} from "../contract/conversationFile.js";
import {isRequestName} from "../contract/requestNames.js";
import {toContractError, TensorwiseError, type ContractError} from "../contract/TensorwiseError.js";
import type {HostClient} from "../host/HostContext.js";
import {cleanStaleUploads, receiveUpload, type ReceiveUploadOptions} from "./receiveUpload.js";

/** What the server needs from the host: the same surface Electron main uses. */
export type WebHost = {
    attach(client: HostClient): () => void;
    handle(name: RequestName, arg: unknown, client: HostClient): Promise<unknown>;
    /** An upload stored a new model file there (rejected copies are deleted again); absent where uploads are not tracked. */
    noteUpload?(modelPath: string): void;
    /** A benchmark's report file (see `bench.export`); absent where the host keeps no benchmarks. */
    benchExportFile?(id: string, format: string): Promise<{path: string; fileName: string}>;
};

export type ServeWebOptions = {
    host: WebHost;
    /** The built renderer (Vite output). */
    rendererDir: string;
    /** Uploads go to `<dataDir>/models/`. */
    dataDir: string;
    /** Defaults to `0` (a random free port). */
    port?: number;
    /** Defaults to a fresh random token. */
    token?: string;
    /** Upload limits (a cap, the disk space to leave free). Defaults to no cap and 1 GiB left free. */
    upload?: ReceiveUploadOptions;
};

export type WebServer = {url: string; port: number; token: string; close(): Promise<void>};

const MAX_REQUEST_BYTES = 1 << 20;
/**
 * `conversations.import` carries a whole conversation file: as many characters as CONVERSATION_IMPORT_MAX_CHARS,
 * each at most 6 bytes once escaped in the JSON body (`\uXXXX`), and the envelope around them.
 */
const MAX_IMPORT_REQUEST_BYTES = 6 * CONVERSATION_IMPORT_MAX_CHARS + 1024;
const SSE_KEEPALIVE_MS = 15_000;

/** Strict CSP: only our own scripts and styles; no inline script, no eval, no framing, no remote connections. */
export const CONTENT_SECURITY_POLICY = [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
    "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'", "object-src 'none'"
].join("; ");

const CONTENT_TYPES: Record<string, string> = {
    ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon", ".json": "application/json",
    ".csv": "text/csv; charset=utf-8",
    ".woff2": "font/woff2", ".map": "application/json"
};

/** One event-stream client of the server. */
type WebClient = {client: HostClient; detach: () => void; response: http.ServerResponse};

/** What the request handlers share: the options, the connected event streams and the bound port. */
type WebState = {
    readonly options: ServeWebOptions;
    readonly rendererDir: string;
    readonly modelsDir: string;
    readonly clients: Map<string, WebClient>;
    readonly tokenMatches: (candidate: string | null | undefined) => boolean;
    port: number;
};

/** Starts the web-mode server on 127.0.0.1 (see the top of this file for what it serves and how it is guarded). */
export async function serveWeb(options: ServeWebOptions): Promise<WebServer> {
    const token = options.token ?? randomBytes(24).toString("base64url");
    const tokenBytes = Buffer.from(token);
    const state: WebState = {
        options,
        rendererDir: path.resolve(options.rendererDir),
        modelsDir: path.join(options.dataDir, "models"),
        clients: new Map(),
        tokenMatches: (candidate) => {
            if (candidate == null)
                return false;
            const bytes = Buffer.from(candidate);
            return bytes.length === tokenBytes.length && timingSafeEqual(bytes, tokenBytes);
        },
        port: 0
    };
    const server = createServer(state);
    // uploads cut off by a killed server leave `.partial` / `.tmp` files: nothing can still be writing them now
    await cleanStaleUploads(state.modelsDir);
    state.port = await listen(server, options.port ?? 0);
    return {
        url: `http://127.0.0.1:${state.port}/#token=${token}`,
        port: state.port,
        token,
        close: () => closeServer(server, state.clients)
    };
}

/** The HTTP server: every request is routed, and nothing a request does can end the process. */
function createServer(state: WebState): http.Server {
    const server = http.createServer((request, response) => {
        try {
            const routed = route(state, request, response);
            if (routed != null)
                routed.catch((error: unknown) => answerFailure(response, error));
        } catch (error) {
            answerFailure(response, error);
        }
    });
    // a malformed request line or header never reaches `route`: answer 400 and drop the socket, as Node would
    server.on("clientError", (_error, socket) => {
        if (socket.writable)
            socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        else
            socket.destroy();
    });
    return server;
}

async function listen(server: http.Server, port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => resolve());
    });
    return (server.address() as AddressInfo).port;
}

async function closeServer(server: http.Server, clients: Map<string, WebClient>): Promise<void> {
    for (const {detach, response} of clients.values()) {
        detach();
        response.end();
    }
    clients.clear();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
}

/** Routes one request. Everything that can throw or reject ends in {@link answerFailure}, never in the process. */
function route(state: WebState, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> | void {
    setSecurityHeaders(response);
    const url = admitTarget(state, request, response);
    if (url == null)
        return;
    if (!url.pathname.startsWith("/api/"))
        return serveStatic(state.rendererDir, url.pathname, request, response);
    if (!authorizeApiCall(state, request, response, url))
        return;
    response.setHeader("Cache-Control", "no-store");
    if (request.method === "GET" && url.pathname === "/api/events")
        openEventStream(state, request, response);
    else if (request.method === "POST" && url.pathname.startsWith("/api/request/"))
        return handleRequest(state, url.pathname.slice("/api/request/".length), request, response);
    else if (request.method === "GET" && url.pathname.startsWith("/api/bench/"))
        return sendBenchFile(state, url.pathname.slice("/api/bench/".length), response);
    else if (request.method === "PUT" && url.pathname === "/api/upload")
        return receiveUpload(request, response, url.searchParams.get("name") ?? "", state.modelsDir, state.options.upload)
            .then((result) => {
                // a new copy the host may delete if the validator rejects it (electron/host/model/UploadedCopies.ts)
                if (result.body.ok && !result.body.result.reused)
                    state.options.host.noteUpload?.(result.body.result.path);
                sendJson(response, result.status, result.body);
            });
    else
        sendJson(response, 404, {ok: false, error: {code: "not-found", message: "no such endpoint"}});
}

/** The gate every request passes: a loopback Host header and a valid target. Answers a refusal itself (then `null`). */
function admitTarget(state: WebState, request: http.IncomingMessage, response: http.ServerResponse): URL | null {
    const hostHeader = request.headers.host ?? "";
    if (hostHeader !== `127.0.0.1:${state.port}` && hostHeader !== `localhost:${state.port}`) {
        sendJson(response, 421, {ok: false, error: {code: "bad-host", message: "unexpected Host header"}});
        return null;
    }
    const url = parseRequestTarget(request.url, hostHeader);
    if (url == null) {
        sendJson(response, 400, {ok: false, error: {code: "bad-request", message: "the request target is not a valid URL"}});
        return null;
    }
    return url;
}

/** The gate of `/api/`: no foreign Origin, and the launch token. Answers a refusal itself (then `false`). */
function authorizeApiCall(state: WebState, request: http.IncomingMessage, response: http.ServerResponse, url: URL): boolean {
    const origin = request.headers.origin;
    if (origin != null && origin !== `http://${request.headers.host ?? ""}`) {
        sendJson(response, 403, {ok: false, error: {code: "bad-origin", message: "cross-origin request refused"}});
        return false;
    }
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    const inQuery = url.searchParams.get("token");
    if (inQuery != null && !tokenMayBeInQuery(request, url)) {
        sendJson(response, 401, {ok: false, error: {code: "bad-token", message: "the token goes in the Authorization header on this route, not in the URL"}});
        return false;
    }
    if (!state.tokenMatches(bearer ?? inQuery)) {
        sendJson(response, 401, {ok: false, error: {code: "bad-token", message: "missing or wrong token"}});
        return false;
    }
    return true;
}

/** The routes a browser opens without headers: the event stream (`EventSource`) and a report download (a link). */
function tokenMayBeInQuery(request: http.IncomingMessage, url: URL): boolean {
    return request.method === "GET" && (url.pathname === "/api/events" || url.pathname.startsWith("/api/bench/"));
}

/** `GET /api/events`: attaches a host client whose events go down this stream until the browser closes it. */
function openEventStream(state: WebState, request: http.IncomingMessage, response: http.ServerResponse): void {
    const id = randomUUID();
    response.writeHead(200, {"Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive"});
    // a client that went away mid-write must not turn into an 'error' event nobody listens to
    response.on("error", () => {});
    const write = (block: string) => {
        if (!response.writableEnded && !response.destroyed)
            response.write(block);
    };
    const client: HostClient = {
        id,
        emit<Name extends EventName>(name: Name, payload: Events[Name]) {
            write(`data: ${JSON.stringify(eventEnvelope(name, payload))}\n\n`);
        }
    };
    const detach = state.options.host.attach(client);
    state.clients.set(id, {client, detach, response});
    write(`event: hello\ndata: ${JSON.stringify({clientId: id})}\n\n`);
    const keepAlive = setInterval(() => write(": keep-alive\n\n"), SSE_KEEPALIVE_MS);
    request.on("close", () => {
        clearInterval(keepAlive);
        state.clients.get(id)?.detach();
        state.clients.delete(id);
    });
}

/** `GET /api/bench/<id>/<format>`: a benchmark report file as an attachment. */
async function sendBenchFile(state: WebState, rest: string, response: http.ServerResponse): Promise<void> {
    try {
        const [id, format, extra] = rest.split("/").map(decodePathPart);
        if (id == null || format == null || extra != null || state.options.host.benchExportFile == null)
            throw new TensorwiseError("not-found", "no such benchmark file");
        const file = await state.options.host.benchExportFile(id, format);
        const stat = await fs.stat(file.path);
        response.writeHead(200, {
            "Content-Type": CONTENT_TYPES[path.extname(file.path)] ?? "text/plain; charset=utf-8",
            "Content-Length": stat.size,
            "Content-Disposition": `attachment; filename="${file.fileName.replace(/[^A-Za-z0-9._-]/g, "_")}"`
        });
        await streamFile(file.path, response);
    } catch (error) {
        const contractError = toContractError(error);
        sendJson(response, contractError.code === "not-found" ? 404 : 400, {ok: false, error: contractError});
    }
}

/** `POST /api/request/<name>`: one contract request from the client of an open event stream, answered with a Reply. */
async function handleRequest(state: WebState, encodedName: string, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    try {
        const name = decodePathPart(encodedName);
        if (!isRequestName(name))
            throw new TensorwiseError("unknown-request", `unknown request "${name}"`);
        const clientId = request.headers["x-tensorwise-client"];
        const entry = typeof clientId === "string" ? state.clients.get(clientId) : undefined;
        if (entry == null)
            throw new TensorwiseError("no-event-stream", "open the event stream first (GET /api/events) and send its client id");
        const parsed = parseBody(await readBody(request, name === "conversations.import" ? MAX_IMPORT_REQUEST_BYTES : MAX_REQUEST_BYTES));
        if (parsed == null || typeof parsed !== "object" || Array.isArray(parsed))
            throw new TensorwiseError("bad-request", "the request body must be a JSON object: {\"arg\": …}");
        const result = await state.options.host.handle(name, (parsed as {arg?: unknown}).arg, entry.client);
        sendJson(response, 200, {ok: true, result: result ?? null});
    } catch (error) {
        // a refusal before the whole body was read (too large, no event stream): the rest of it is still on the way, so
        // the connection cannot carry the next request — close it, or a browser reusing it waits for a reset
        if (!request.readableEnded) response.setHeader("Connection", "close");
        sendJson(response, 200, {ok: false, error: toContractError(error)});
    }
}

/** A request body as JSON (`{}` when empty); only a body that is not JSON gets the error saying so. */
function parseBody(body: string): unknown {
    if (body === "")
        return {};
    try {
        return JSON.parse(body) as unknown;
    } catch {
        throw new TensorwiseError("bad-request", "the request body is not JSON");
    }
}

function setSecurityHeaders(response: http.ServerResponse): void {
    response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    response.setHeader("X-Content-Type-Options", "nosniff");
    response.setHeader("Referrer-Policy", "no-referrer");
    response.setHeader("X-Frame-Options", "DENY");
    response.setHeader("Cross-Origin-Opener-Policy", "same-origin");
    response.setHeader("Cross-Origin-Resource-Policy", "same-origin");
}

/** Streams a file as the body; a read error (the file vanished after `stat`) cuts the answer off instead of throwing. */
async function streamFile(file: string, response: http.ServerResponse): Promise<void> {
    await pipeline(createReadStream(file), response).catch(() => response.destroy());
}

/** A request target as a URL, or `null` where it is not one (`//[x`, for one, makes `new URL` throw). */
function parseRequestTarget(target: string | undefined, hostHeader: string): URL | null {
    try {
        return new URL(target ?? "/", `http://${hostHeader}`);
    } catch {
        return null;
    }
}

/** `decodeURIComponent` that answers a malformed escape (`%E0%A4%A`) with a request error instead of a `URIError`. */
function decodePathPart(part: string): string {
    try {
        return decodeURIComponent(part);
    } catch {
        throw new TensorwiseError("bad-request", "the request path has a malformed %-escape");
    }
}

/**
 * The last line of defence: whatever a handler threw, the client gets an error answer and the server keeps serving.
 * Internal details stay in the server's log, not in the answer.
 */
function answerFailure(response: http.ServerResponse, error: unknown): void {
    const contractError: ContractError = error instanceof TensorwiseError
        ? error.toContract() : {code: "internal", message: "the server could not answer this request"};
    if (!(error instanceof TensorwiseError))
        process.stderr.write(`[web] request failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    if (response.headersSent)
        response.destroy();
    else
        sendJson(response, 500, {ok: false, error: contractError});
}

export function sendJson(response: http.ServerResponse, status: number, body: Reply<unknown>): void {
    if (response.headersSent) {
        response.end();
        return;
    }
    const text = JSON.stringify(body);
    response.writeHead(status, {"Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text)});
    response.end(text);
}

async function readBody(request: http.IncomingMessage, maxBytes: number): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes)
            throw new TensorwiseError("too-large", "the request body is too large");
        chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString("utf8");
}

async function serveStatic(root: string, pathname: string, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    if (request.method !== "GET" && request.method !== "HEAD") {
        sendJson(response, 405, {ok: false, error: {code: "method", message: "method not allowed"}});
        return;
    }
    let relative: string;
    try {
        relative = decodeURIComponent(pathname === "/" ? "/index.html" : pathname);
    } catch {
        sendJson(response, 400, {ok: false, error: {code: "bad-path", message: "bad path"}});
        return;
    }
    const file = path.resolve(root, `.${relative}`);
    if (!file.startsWith(root + path.sep) || relative.includes("\0")) {
        sendJson(response, 404, {ok: false, error: {code: "not-found", message: "not found"}});
        return;
    }
    try {
        const stat = await fs.stat(file);
        if (!stat.isFile())
            throw new Error("not a file");
        response.writeHead(200, {
            "Content-Type": CONTENT_TYPES[path.extname(file)] ?? "application/octet-stream",
            "Content-Length": stat.size,
            "Cache-Control": relative.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache"
        });
        if (request.method === "HEAD")
            response.end();
        else
            await streamFile(file, response);
    } catch {
        sendJson(response, 404, {ok: false, error: {code: "not-found", message: `not found: ${relative}`}});
    }
}
