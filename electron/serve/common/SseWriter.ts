import type http from "node:http";

/**
 * Server-Sent Events as OpenAI streams them: one `data: <json>` event per chunk and a final `data: [DONE]`; or, for
 * APIs that name their events (Anthropic's messages, OpenAI's responses), `event: <name>` lines and a plain end.
 * Writes after the client went away are dropped (the request's cancellation handles the rest).
 */
export class SseWriter {
    constructor(private readonly response: http.ServerResponse) {
        response.writeHead(200, {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", Connection: "keep-alive"});
        // a client that went away mid-write must not turn into an 'error' event nobody listens to
        response.on("error", () => {});
    }

    get open(): boolean {
        return !this.response.writableEnded && !this.response.destroyed;
    }

    /** One chunk object. */
    send(data: unknown): void {
        if (this.open)
            this.response.write(`data: ${JSON.stringify(data)}\n\n`);
    }

    /** One named event (`event: <name>` and its JSON). */
    event(name: string, data: unknown): void {
        if (this.open)
            this.response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    }

    /** The end of the response, with `last` as a final named event when given. */
    end(last?: {name: string; data: unknown}): void {
        if (this.open)
            this.response.end(last == null ? undefined : `event: ${last.name}\ndata: ${JSON.stringify(last.data)}\n\n`);
    }

    /** `data: [DONE]` and the end of the response. */
    done(): void {
        if (this.open)
            this.response.end("data: [DONE]\n\n");
    }

    /** An error after the stream started: OpenAI's error object as the last event (the status is already 200). */
    fail(body: unknown): void {
        if (this.open)
            this.response.end(`data: ${JSON.stringify(body)}\n\n`);
    }
}
