/**
 * A request's time limit and its client: the signal every piece of work for one request runs under aborts when the
 * client disconnects (`client-gone`, answered 499 where anything can still be answered) or when the server's time limit
 * passes (`time-limit`, a 504), whichever comes first.
 */
import type http from "node:http";
import {OpenAiError} from "../common/OpenAiError.js";

/** Why a request's work was stopped before it finished. */
export class Stopped extends Error {
    /** `thinking-budget`: the thinking took its whole budget (Anthropic's `thinking.budget_tokens`); the reply ends there, cut by the length. */
    constructor(readonly why: "client-gone" | "time-limit" | "thinking-budget") {
        super(why);
    }
}

/** The answer to a request that ran past the time limit of `timeoutMs`. */
export function timeLimitError(timeoutMs: number): OpenAiError {
    return new OpenAiError(504, `The request ran past this server's time limit of ${Math.round(timeoutMs / 1000)} s and was stopped.`, "server_error", "timeout");
}

/** The abort of one request's work: `controller.signal` stops it (with a {@link Stopped} reason); `release` ends the watch. */
export type RequestDeadline = {readonly controller: AbortController; release(): void};

/** Watches `response` for a client that leaves and starts the time limit; call `release` once the work is over. */
export function requestDeadline(response: http.ServerResponse, timeoutMs: number): RequestDeadline {
    const controller = new AbortController();
    const onClose = () => {
        if (!response.writableFinished)
            controller.abort(new Stopped("client-gone"));
    };
    response.on("close", onClose);
    const timer = setTimeout(() => controller.abort(new Stopped("time-limit")), timeoutMs);
    return {
        controller,
        release: () => {
            clearTimeout(timer);
            response.off("close", onClose);
        }
    };
}

/** Runs `work` with a signal that aborts when the client leaves or the time limit passes (then a 499 or a 504). */
export async function withTimeLimit<T>(response: http.ServerResponse, timeoutMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = requestDeadline(response, timeoutMs);
    const {signal} = deadline.controller;
    try {
        return await work(signal);
    } catch (error) {
        if (signal.aborted && signal.reason instanceof Stopped)
            throw signal.reason.why === "client-gone" ? new OpenAiError(499, "The client disconnected.", "invalid_request_error", "client-gone")
                : timeLimitError(timeoutMs);
        throw error;
    } finally {
        deadline.release();
    }
}
