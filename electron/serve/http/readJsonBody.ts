import type http from "node:http";
import {STRUCTURE_LIMITS} from "../../contract/limits.js";
import {OpenAiError} from "../common/OpenAiError.js";
import {jsonDepth, tooDeepJson} from "./tooDeepJson.js";

/** A body over the limit is read and dropped up to this many times the limit, so the client sees the 413 (a client
 * still sending when the connection closes reports a broken pipe, not the answer); beyond it the connection is cut. */
const DRAIN_FACTOR = 16;

/**
 * The request body as JSON: a wrong `Content-Type`, unparsable text and JSON nested deeper than
 * STRUCTURE_LIMITS.requestJsonDepth are 400s (the last naming where), a body over `maxBytes` is a 413 (its bytes past
 * the limit are dropped unread, never kept).
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
    const parse = () => {
        const bytes = Buffer.concat(chunks, size);
        chunks.length = 0;
        let body: unknown;
        try {
            body = JSON.parse(bytes.toString("utf8")) as unknown;
        } catch {
            throw OpenAiError.badRequest("The request body is not valid JSON.");
        }
        if (jsonDepth(bytes) > STRUCTURE_LIMITS.requestJsonDepth) {
            const deep = tooDeepJson(body, STRUCTURE_LIMITS.requestJsonDepth) ?? "(the body)";
            throw OpenAiError.badRequest(`\`${deep}\` nests JSON deeper than the ${STRUCTURE_LIMITS.requestJsonDepth} levels this server reads.`, deep, "json_too_deep");
        }
        return body;
    };
    return size <= OWN_TURN_BYTES ? parse() : await onItsOwnTurn(parse);
}

/**
 * Bodies larger than this are parsed one at a time, each in a turn of the event loop of its own, with the server's
 * other work (a `/health`, other streams' tokens) answered between two (a 4 MiB body takes about 50 ms to parse on a
 * quiet core; several arriving together were parsed back to back, stalling everyone for their sum).
 */
const OWN_TURN_BYTES = 64 * 1024;

let parsing: Promise<void> = Promise.resolve();

async function onItsOwnTurn<T>(work: () => T): Promise<T> {
    const previous = parsing;
    let release!: () => void;
    parsing = new Promise((resolve) => (release = resolve));
    await previous;
    await new Promise((resolve) => setImmediate(resolve));
    try {
        return work();
    } finally {
        release();
    }
}

function tooLarge(maxBytes: number): OpenAiError {
    return new OpenAiError(413, `The request body is larger than this server accepts (${Math.round(maxBytes / 1024 / 1024)} MiB).`,
        "invalid_request_error", "request_too_large");
}
