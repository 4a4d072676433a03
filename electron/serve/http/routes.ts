/**
 * The server's one route table: every endpoint with its method, the llama-server aliases of some, and the handler each
 * is given (serveOpenAi.ts hands them in; this file knows no model). The 404 sentence lists the table, so it cannot
 * drift from what is served.
 */
import type http from "node:http";
import {OpenAiError} from "../common/OpenAiError.js";
import type {Tenant} from "../common/conversationKey.js";

/** Every endpoint, in the order the 404 sentence names them; `{id}` stands for one path segment or more. */
export const API_ROUTES = [
    {method: "GET", path: "/health", name: "health"},
    {method: "GET", path: "/v1/models", name: "models"},
    {method: "GET", path: "/v1/models/{id}", name: "model"},
    {method: "POST", path: "/v1/chat/completions", name: "chatCompletions"},
    {method: "POST", path: "/v1/completions", name: "completions"},
    {method: "POST", path: "/v1/responses", name: "responses"},
    {method: "POST", path: "/v1/embeddings", name: "embeddings"},
    {method: "POST", path: "/v1/messages", name: "messages"},
    {method: "POST", path: "/v1/messages/count_tokens", name: "countTokens"}
] as const;

export type RouteName = (typeof API_ROUTES)[number]["name"];

/**
 * Paths answered as another endpoint, as llama-server answers them (tools/server/server.cpp registers each route
 * under both names): OpenAI clients given a base URL without `/v1` ask for `/chat/completions`, `/models` and
 * `/responses`, and load balancers probe `/v1/health`. Only paths whose llama-server answer has the same shape are
 * here: llama-server's `/completions` and `/embeddings` are its own formats (not OpenAI's), so they stay unknown (404).
 */
export const ENDPOINT_ALIASES: Readonly<Record<string, string>> = {
    "/v1/health": "/health",
    "/models": "/v1/models",
    "/chat/completions": "/v1/chat/completions",
    "/responses": "/v1/responses"
};

/** The endpoint `pathname` is served as: its alias's target, else itself. */
export function servedPath(pathname: string): string {
    return Object.hasOwn(ENDPOINT_ALIASES, pathname) ? ENDPOINT_ALIASES[pathname]! : pathname;
}

/** What a handler is given: the exchange, the caller's tenant (its key's), its body (read on demand) and `{id}`. */
export type RouteCall = {
    request: http.IncomingMessage;
    response: http.ServerResponse;
    tenant: Tenant;
    /** The JSON body, read within the server's size limit (400 / 413 otherwise: readJsonBody.ts). */
    body(): Promise<unknown>;
    /** The path's `{id}` as sent (still percent-encoded). */
    param: string;
};

export type RouteHandler = (call: RouteCall) => Promise<void> | void;
export type RouteHandlers = Record<RouteName, RouteHandler>;

/** Endpoints answered without a key (as llama-server's `/health`): they tell nothing. */
const OPEN_ROUTES: ReadonlySet<RouteName> = new Set(["health"]);

/** The route of a request's path (aliases followed): `asked` is the path as sent, for the messages. */
export type FoundRoute = {name: RouteName; method: string; param: string; open: boolean; asked: string};

/** The route `url` names (aliases followed), or `null` for a path no endpoint has. */
export function findRoute(url: string | undefined): FoundRoute | null {
    const asked = (url ?? "/").split("?")[0]!;
    const pathname = servedPath(asked);
    for (const route of API_ROUTES) {
        const prefix = route.path.endsWith("/{id}") ? route.path.slice(0, -"{id}".length) : null;
        if (prefix != null ? pathname.startsWith(prefix) : pathname === route.path)
            return {name: route.name, method: route.method, param: prefix != null ? pathname.slice(prefix.length) : "", open: OPEN_ROUTES.has(route.name), asked};
    }
    return null;
}

/** The 404 for a path no endpoint has: it names every endpoint and alias. */
export function noSuchEndpoint(method: string | undefined, url: string | undefined): OpenAiError {
    const asked = (url ?? "/").split("?")[0]!;
    const listed = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    return new OpenAiError(404, `There is no endpoint ${method} ${asked.slice(0, 100)}; this server has ${listed.slice(0, -1).join(", ")} and ${listed.at(-1)} ` +
        `(and ${Object.keys(ENDPOINT_ALIASES).join(", ")} as their llama-server aliases).`, "invalid_request_error", "not_found");
}

/** A 405 unless the request's method is the route's. */
export function checkMethod(route: FoundRoute, method: string | undefined): void {
    if (method !== route.method)
        throw new OpenAiError(405, `${route.asked.slice(0, 100)} takes ${route.method} requests.`, "invalid_request_error", "method_not_allowed");
}
