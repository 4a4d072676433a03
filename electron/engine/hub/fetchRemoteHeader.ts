/**
 * A remote GGUF's header (metadata and tensor table) without its weights: the first bytes are fetched over HTTP Range
 * into a sparse file of the model's full size (the weights a hole that reads as zeros and takes no disk), growing the
 * prefix until our validator accepts the header. Bounded: at most {@link MAX_HEADER_BYTES} and
 * {@link MAX_HEADER_REQUESTS} requests. The bytes are untrusted and checked like any dropped file (validateGgufOutOfProcess).
 * llama.cpp's no-alloc simulation and the planner then read the sparse file as the model: they read the header only.
 */
import {promises as fs} from "node:fs";
import type {HubAccess} from "./hubAccess.js";
import {hubFetch} from "./hubFetch.js";
import {HubError} from "./HubError.js";
import {formatBytes} from "../format/formatBytes.js";
import {GgufValidationError} from "../gguf/errors/GgufValidationError.js";
import type {ValidatedGguf} from "../gguf/types/ValidatedGguf.js";
import {validateGgufOutOfProcess} from "../gguf/validateGgufOutOfProcess.js";

/** The first request's size; each next one doubles what is held. */
export const FIRST_HEADER_BYTES = 2 ** 20;
/** Header bytes read at most (a 256k-token vocabulary with merges takes about 10 MiB). */
export const MAX_HEADER_BYTES = 64 * 2 ** 20;
/** Range requests per header at most. */
export const MAX_HEADER_REQUESTS = 8;
/** Largest model size a sparse file is made for (16 TiB, ext4's largest file). */
const MAX_SPARSE_BYTES = 2 ** 44;

/** Options of {@link fetchRemoteHeader}. */
export type FetchRemoteHeaderOptions = {
    readonly url: string;
    readonly access: HubAccess;
    readonly what: string;
    /** The size the repository lists for the file. */
    readonly bytes: number;
    /** Where the sparse copy is written (the caller deletes it). */
    readonly outPath: string;
    readonly stallMs?: number;
    readonly signal?: AbortSignal;
    /** Defaults to {@link MAX_HEADER_BYTES}. */
    readonly maxHeaderBytes?: number;
    /** The first request's size. Defaults to {@link FIRST_HEADER_BYTES}. */
    readonly firstBytes?: number;
};

/** The validated header, and how many bytes and requests it took. */
export type RemoteHeader = {
    readonly gguf: ValidatedGguf;
    readonly fetchedBytes: number;
    readonly requests: number;
};

/** Fetches and validates the header of the GGUF at `url` into a sparse file at `outPath`. */
export async function fetchRemoteHeader(options: FetchRemoteHeaderOptions): Promise<RemoteHeader> {
    const {bytes, what} = options;
    if (bytes > MAX_SPARSE_BYTES)
        throw new HubError(`${what}: the repository lists ${bytes} bytes, more than a model file can hold here.`);
    const maxHeader = Math.min(options.maxHeaderBytes ?? MAX_HEADER_BYTES, bytes);
    const file = await fs.open(options.outPath, "w", 0o600);
    let have = 0;
    try {
        await file.truncate(bytes);
        for (let request = 1; ; request++) {
            const want = Math.min(maxHeader, have === 0 ? options.firstBytes ?? FIRST_HEADER_BYTES : have * 2);
            have += await fetchRange(file, options, have, want);
            try {
                const gguf = await validateGgufOutOfProcess(options.outPath, {headerBytesAvailable: have, signal: options.signal, timeoutMs: 30_000});
                return {gguf, fetchedBytes: have, requests: request};
            } catch (error) {
                if (!(error instanceof GgufValidationError) || error.code !== "truncated" || have >= maxHeader) {
                    if (error instanceof GgufValidationError && error.code === "truncated" && have >= maxHeader && maxHeader < bytes)
                        throw new HubError(`${what}: its header is longer than ${formatBytes(maxHeader)}, more than is read before a download.`);
                    if (error instanceof GgufValidationError)
                        throw new HubError(`${what}: the header fails validation: ${error.message}`);
                    throw error;
                }
                if (request >= MAX_HEADER_REQUESTS)
                    throw new HubError(`${what}: its header was not complete after ${request} requests (${have} bytes).`);
            }
        }
    } finally {
        await file.close();
    }
}

/** Writes bytes `[from, to)` of the remote file at their place; returns how many came. */
async function fetchRange(file: fs.FileHandle, options: FetchRemoteHeaderOptions, from: number, to: number): Promise<number> {
    const answer = await hubFetch(options.url, {
        access: options.access, what: options.what, stallMs: options.stallMs, signal: options.signal,
        headers: {Range: `bytes=${from}-${to - 1}`}
    });
    // a server that ignores the range sends the whole file from byte 0: the prefix is read and the rest left unread
    const skip = answer.response.status === 206 ? 0 : from;
    if (answer.response.status === 206) {
        const range = /^bytes (\d+)-/.exec(answer.response.headers.get("content-range") ?? "");
        if (range == null || Number(range[1]) !== from) {
            answer.cancel();
            throw new HubError(`${options.what}: the server answered another byte range than bytes ${from}-${to - 1}.`);
        }
    }
    let position = 0;
    let written = 0;
    for await (const chunk of answer.readBody()) {
        const begin = Math.max(0, skip - position);
        const end = Math.min(chunk.byteLength, skip + (to - from) - position);
        position += chunk.byteLength;
        if (end > begin) {
            await file.write(chunk, begin, end - begin, from + written);
            written += end - begin;
        }
        if (position >= skip + (to - from)) {
            answer.cancel();
            break;
        }
    }
    if (written < to - from && from + written < options.bytes)
        throw new HubError(`${options.what}: the server sent ${written} of the ${to - from} header bytes asked for.`);
    return written;
}
