import type {GgufErrorCode} from "../../../contract/errorCodes.js";

/**
 * Why a GGUF file was rejected: file-format codes, model codes (hyper-parameters that llama.cpp would abort on, and
 * tensors that do not match them), then the validation run itself (I/O, the out-of-process child). Listed with their
 * sentences in electron/contract/errorCodes.ts.
 */
export type GgufValidationErrorCode = GgufErrorCode;

/** Thrown when a GGUF file is malformed (or could not be validated); `message` says what is wrong and where. */
export class GgufValidationError extends Error {
    /** Machine-readable reason. */
    public readonly code: GgufValidationErrorCode;
    /** Byte offset in the file the problem was found at, when there is one. */
    public readonly offset: number | undefined;
    /** `message` without the " (at byte N)" suffix. */
    public readonly detail: string;

    public constructor(code: GgufValidationErrorCode, detail: string, offset?: number) {
        super(offset === undefined ? detail : `${detail} (at byte ${offset})`);
        this.name = "GgufValidationError";
        this.code = code;
        this.offset = offset;
        this.detail = detail;
    }
}
