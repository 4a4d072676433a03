/**
 * The one error type of every boundary: the engine throws it, the host checks requests with it, the transports
 * rebuild it on the renderer side, and it crosses IPC / HTTP as a {@link ContractError}.
 */
import {errorSentence, isErrorCode, type ErrorCode} from "./errorCodes.js";

/** An error as it crosses the contract: a code the UI can branch on and a message a person can read. */
export type ContractError = {code: ErrorCode; message: string};

/** An error with a code from {@link ErrorCode}; its message defaults to the code's sentence. */
export class TensorwiseError extends Error {
    constructor(readonly code: ErrorCode, message: string = errorSentence(code)) {
        super(message);
        this.name = "TensorwiseError";
    }

    /** The error as the contract carries it. */
    toContract(): ContractError {
        return {code: this.code, message: this.message};
    }

    /** A {@link ContractError} received over IPC or HTTP, as an error to throw (an unknown code becomes `fallback`). */
    static fromContract(error: {code?: unknown; message?: unknown}, fallback: ErrorCode = "internal"): TensorwiseError {
        const code = isErrorCode(error.code) ? error.code : fallback;
        return new TensorwiseError(code, typeof error.message === "string" && error.message !== "" ? error.message : errorSentence(code));
    }
}

/**
 * Whatever was thrown, as the contract carries it: the error's own code when it has one from {@link ErrorCode}
 * (a {@link TensorwiseError}, or an engine error class with a `code` field), otherwise `fallback` with the message.
 */
export function toContractError(error: unknown, fallback: ErrorCode = "internal"): ContractError {
    if (error instanceof TensorwiseError)
        return error.toContract();
    const code = error != null && typeof error === "object" && "code" in error && isErrorCode(error.code) ? error.code : fallback;
    const message = error instanceof Error ? error.message : String(error);
    return {code, message: message === "" ? errorSentence(code) : message};
}
