/**
 * The transport, which knows no model: an HTTP server on one address that answers only what the route table has
 * (routes.ts), each request through the guards first.
 *
 * Guards: 127.0.0.1 unless told otherwise, and then only with API keys (apiKeys.ts: `Authorization: Bearer <key>`,
 * compared in constant time, 401 otherwise); without keys only `Host: 127.0.0.1|localhost|[::1]:<port>` is answered (a
 * web page that rebinds its DNS name to 127.0.0.1 gets 421); JSON bodies only (a cross-site form cannot post one
 * without a CORS preflight, granted only to the origins listed, CorsPolicy.ts); bodies over the limit get 413
 * (readJsonBody.ts). Whatever a handler throws is answered in OpenAI's error shape (or the one `errorShape` picks) and
 * the server keeps serving.
 */
import http from "node:http";
import type {AddressInfo} from "node:net";
import {isLoopbackHost, refuseOpenHost as refuseOpenHostFor} from "../../contract/server.js";
import {OPEN_TENANT} from "../common/conversationKey.js";
import {OpenAiError} from "../common/OpenAiError.js";
import {ApiKeyList} from "./apiKeys.js";
import {CorsPolicy} from "./CorsPolicy.js";
import {readJsonBody} from "./readJsonBody.js";
import {findRoute, noSuchEndpoint, checkMethod, type RouteHandlers} from "./routes.js";

/** The sentence for a non-loopback address without a key (the CLI prints it before loading anything). */
export function refuseOpenHost(host: string, apiKeys: readonly string[]): string | null {
    return refuseOpenHostFor(host, apiKeys.length > 0, "give API keys that clients must send (--api-key-file or TENSORWISE_API_KEY)");
}

export type HttpServerOptions = {
    host: string;
    /** 0: a free port (see {@link HttpServer.port}). */
    port: number;
    apiKeys: readonly string[];
    corsOrigins: readonly string[];
    /** Request bodies beyond this are refused (413). */
    maxBodyBytes: number;
    handlers: RouteHandlers;
    /** The error body's shape for a request to `url`; OpenAI's (`OpenAiError.toBody`) when it gives none. */
    errorShape?: (url: string) => ((error: OpenAiError) => unknown) | undefined;
    /** Every request answered with an error: the status sent and the error's code (or `internal`). */
    onError?: (request: http.IncomingMessage, status: number, outcome: string) => void;
};

export class HttpServer {
    private keys: ApiKeyList;
    private readonly server: http.Server;
    private readonly cors: CorsPolicy;
    private port_ = 0;

    private constructor(private readonly options: HttpServerOptions) {
        this.keys = new ApiKeyList(options.apiKeys);
        this.cors = new CorsPolicy(options.corsOrigins);
        this.server = http.createServer((request, response) => {
            response.setHeader("X-Content-Type-Options", "nosniff");
            this.cors.decorate(request, response);
            this.route(request, response).catch((error: unknown) => {
                const status = answerError(response, error, options.errorShape?.(request.url ?? ""));
                options.onError?.(request, status, error instanceof OpenAiError ? error.code ?? error.type : "internal");
            });
        });
        this.server.on("clientError", (_error, socket) => {
            if (socket.writable)
                socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
            else
                socket.destroy();
        });
    }

    /** Listens on `options.host`:`options.port`; throws before listening for a non-loopback address without keys. */
    static async listen(options: HttpServerOptions): Promise<HttpServer> {
        const refused = refuseOpenHost(options.host, options.apiKeys);
        if (refused != null)
            throw new Error(refused);
        const server = new HttpServer(options);
        await new Promise<void>((resolve, reject) => {
            server.server.once("error", reject);
            server.server.listen(options.port, options.host, () => {
                server.server.off("error", reject);
                resolve();
            });
        });
        server.port_ = (server.server.address() as AddressInfo).port;
        return server;
    }

    /** The port listened on. */
    get port(): number {
        return this.port_;
    }

    /** The base URL of the API (`http://127.0.0.1:8080/v1`). */
    get url(): string {
        const shownHost = this.options.host.includes(":") ? `[${this.options.host}]` : this.options.host;
        return `http://${shownHost}:${this.port}/v1`;
    }

    /** Replaces the accepted keys at once; throws, changing nothing, when that would leave a non-loopback address without a key. */
    setApiKeys(apiKeys: readonly string[]): void {
        const refused = refuseOpenHost(this.options.host, apiKeys);
        if (refused != null)
            throw new Error(refused);
        this.keys = new ApiKeyList(apiKeys);
    }

    /** Stops listening and closes every connection (each closed connection stops its request's work). */
    async close(): Promise<void> {
        const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
        this.server.closeAllConnections();
        await closed;
    }

    private async route(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
        if (this.keys.size === 0 && !isLoopbackHost(hostName(request.headers.host ?? "", this.port)))
            throw new OpenAiError(421, "This server answers only requests addressed to 127.0.0.1 or localhost.", "invalid_request_error", "bad_host");
        // browsers send preflights without the key: answered before it is checked, and never run as a request
        if (this.cors.isPreflight(request)) {
            this.cors.answerPreflight(request, response);
            return;
        }
        const found = findRoute(request.url);
        const call = {request, response, body: () => readJsonBody(request, this.options.maxBodyBytes), param: found?.param ?? ""};
        // whether the server is up, for load balancers and scripts: no key needed (as llama-server's /health), nothing told
        if (found?.open === true) {
            checkMethod(found, request.method);
            await this.options.handlers[found.name]({...call, tenant: OPEN_TENANT});
            return;
        }
        // without keys every client is one tenant: they cannot be told apart (and are all on this machine)
        const tenant = this.keys.size === 0 ? OPEN_TENANT : this.keys.tenantOf(request.headers);
        if (found == null)
            throw noSuchEndpoint(request.method, request.url);
        checkMethod(found, request.method);
        await this.options.handlers[found.name]({...call, tenant});
    }
}

/** The host name of a `Host` header for this port (`127.0.0.1:8080` → `127.0.0.1`), or "" when the port differs. */
function hostName(header: string, port: number): string {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(header);
    if (match == null || Number(match[2]) !== port)
        return "";
    return match[1]!.replace(/^\[|\]$/g, "");
}

/** Whatever a handler threw ends here: OpenAI's error shape, and the server keeps serving. Returns the HTTP status sent. */
function answerError(response: http.ServerResponse, error: unknown, shape: (error: OpenAiError) => unknown = (answer) => answer.toBody()): number {
    const answer = error instanceof OpenAiError ? error
        : new OpenAiError(500, "The server could not answer this request.", "server_error", "internal");
    if (!(error instanceof OpenAiError))
        process.stderr.write(`[serve] request failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    if (response.headersSent) {
        response.destroy();
        return answer.status;
    }
    // a refused upload (413) may still be sending: close the connection rather than read the rest
    sendJson(response, answer.status, shape(answer), {...answer.headers, ...(answer.status === 413 ? {Connection: "close"} : {})});
    return answer.status;
}

export function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {"Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers});
    response.end(text);
}
