import type http from "node:http";
import {OpenAiError} from "./OpenAiError.js";

/**
 * The request body as JSON: 415-style mistakes (not `application/json`) and unparsable text are 400s, a body over
 * `maxBytes` is a 413 (refused from `Content-Length` before reading, or as soon as the bytes pass the limit).
 */
export async function readJsonBody(request: http.IncomingMessage, maxBytes: number): Promise<unknown> {
    const type = request.headers["content-type"] ?? "";
    if (!/^application\/json\b/i.test(type))
        throw OpenAiError.badRequest(`Send the body as JSON with "Content-Type: application/json" (got ${JSON.stringify(type.slice(0, 60) || "none")}).`);
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes)
        throw tooLarge(maxBytes);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes)
            throw tooLarge(maxBytes);
        chunks.push(chunk);
    }
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
