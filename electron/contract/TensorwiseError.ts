/**
 * The one error type of every boundary: the engine throws it, the host checks requests with it, the transports
 * rebuild it on the renderer side, and it crosses IPC / HTTP as a {@link ContractError}.
 */
import {errorFix, errorSentence, isErrorCode, type ErrorCode} from "./errorCodes.js";

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

/** An error as a person reads it: what went wrong in words, what to do about it, and the exact detail behind it. */
export type HumanError = {
    code: ErrorCode;
    /** One sentence for the code (errorCodes.ts). */
    sentence: string;
    /** What to do, or `null` when the app has nothing to suggest. */
    fix: string | null;
    /** The error's own message, for a click away; `null` when it only repeats the sentence. */
    detail: string | null;
};

/**
 * `error` for a person. `file` is the user's own file when the engine saw a copy of it (a web-mode upload stored in
 * the models folder): the detail then names `file.name` wherever the message named the copy.
 */
export function humanError(error: ContractError, file?: {copyPath: string; name: string}): HumanError {
    const sentence = errorSentence(error.code);
    let detail = error.message.trim();
    if (file != null && file.copyPath !== "") {
        detail = detail.split(file.copyPath).join(file.name);
        const copyName = file.copyPath.split(/[\\/]/).at(-1) ?? "";
        if (copyName !== "" && copyName !== file.name)
            detail = detail.split(copyName).join(file.name);
    }
    return {code: error.code, sentence, fix: errorFix(error.code), detail: detail === "" || detail === sentence ? null : detail};
}
