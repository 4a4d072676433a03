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
