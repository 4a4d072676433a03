import type http from "node:http";
import {OpenAiError} from "../common/OpenAiError.js";

/** A body over the limit is read and dropped up to this many times the limit, so the client sees the 413 (a client
 * still sending when the connection closes reports a broken pipe, not the answer); beyond it the connection is cut. */
const DRAIN_FACTOR = 16;

/**
 * The request body as JSON: a wrong `Content-Type` and unparsable text are 400s, a body over `maxBytes` is a 413 (its
 * bytes past the limit are dropped unread, never kept).
 */
export async function readJsonBody(request: http.IncomingMessage, maxBytes: number): Promise<unknown> {
    const type = request.headers["content-type"] ?? "";
    if (!/^application\/json\b/i.test(type))
        throw OpenAiError.badRequest(`Send the body as JSON with "Content-Type: application/json" (got ${JSON.stringify(type.slice(0, 60) || "none")}).`);
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes * DRAIN_FACTOR)
        throw tooLarge(maxBytes);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes * DRAIN_FACTOR)
            throw tooLarge(maxBytes);
        if (size <= maxBytes)
            chunks.push(chunk);
    }
    if (size > maxBytes)
        throw tooLarge(maxBytes);
    try {
        return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    } catch {
        throw OpenAiError.badRequest("The request body is not valid JSON.");
    }
}

function tooLarge(maxBytes: number): OpenAiError {
    return new OpenAiError(413, `The request body is larger than this server accepts (${Math.round(maxBytes / 1024 / 1024)} MiB).`,
        "invalid_request_error", "request_too_large");
}
