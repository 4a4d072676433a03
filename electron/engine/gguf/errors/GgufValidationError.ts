/**
 * Why a GGUF file was rejected. File-format codes come first, then model codes (hyper-parameters that llama.cpp would
 * abort on, and tensors that do not match them); the last group is about the validation run itself (I/O, the
 * out-of-process child).
 */
export type GgufValidationErrorCode =
    | "truncated"
    | "bad-magic"
    | "bad-version"
    | "count-too-large"
    | "string-too-long"
    | "metadata-too-large"
    | "bad-value-type"
    | "array-too-deep"
    | "bad-key"
    | "empty-key"
    | "duplicate-key"
    | "bad-alignment"
    | "bad-tensor-name"
    | "duplicate-tensor"
    | "bad-dims"
    | "dims-overflow"
    | "unknown-type"
    | "bad-row-size"
    | "misaligned-offset"
    | "out-of-bounds"
    | "overlap"
    | "gap"
    | "duplicate-token"
    | "bad-vocab"
    | "missing-hparam"
    | "bad-hparam"
    | "layer-mismatch"
    | "bad-experts"
    | "missing-tensor"
    | "shape-mismatch"
    | "io-error"
    | "timeout"
    | "out-of-memory"
    | "child-failed";

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
