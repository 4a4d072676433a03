/**
 * An error answered in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with its HTTP status.
 * Clients built for OpenAI's API (the `openai` npm package among them) read `message` and the status from it.
 */
export class OpenAiError extends Error {
    constructor(
        readonly status: number,
        message: string,
        /** OpenAI's error type: `invalid_request_error`, `authentication_error`, `rate_limit_error`, `server_error`… */
        readonly type: string,
        /** Machine-readable code (`invalid_api_key`, `queue_full`…), or `null`. */
        readonly code: string | null = null,
        /** The request field at fault (`messages`, `max_tokens`…), or `null`. */
        readonly param: string | null = null,
        /** Extra response headers (`Retry-After` on a 429). */
        readonly headers: Readonly<Record<string, string>> = {}
    ) {
        super(message);
    }

    /** A 400 about one field of the request body. */
    static badRequest(message: string, param: string | null = null, code: string | null = null): OpenAiError {
        return new OpenAiError(400, message, "invalid_request_error", code, param);
    }

    /** The JSON body OpenAI answers with. */
    toBody(): {error: {message: string; type: string; param: string | null; code: string | null}} {
        return {error: {message: this.message, type: this.type, param: this.param, code: this.code}};
    }
}
