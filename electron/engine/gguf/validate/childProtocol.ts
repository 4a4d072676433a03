import type {GgufValidationErrorCode} from "../errors/GgufValidationError.js";
import type {ValidatedGguf, ValidateGgufOptions} from "../types/ValidatedGguf.js";

/**
 * Messages between `validateGgufOutOfProcess` and its child. They travel with `serialization: "advanced"` (the V8
 * structured-clone format), which carries bigints, Maps and typed arrays as they are.
 */
export type ValidateGgufRequest = {
    readonly path: string;
    readonly options: ValidateGgufOptions;
};

/** The child's one reply. */
export type ValidateGgufResponse =
    | {readonly ok: true; readonly result: ValidatedGguf}
    | {
        readonly ok: false;
        readonly error: {readonly code: GgufValidationErrorCode; readonly detail: string; readonly offset?: number};
    };

/** Narrows an IPC message to a request (the child checks what it is sent). */
export function isValidateGgufRequest(message: unknown): message is ValidateGgufRequest {
    if (typeof message !== "object" || message === null)
        return false;
    const {path, options} = message as Record<string, unknown>;
    return typeof path === "string" && typeof options === "object" && options !== null;
}

/** Narrows an IPC message to a response (the parent checks what its child sends). */
export function isValidateGgufResponse(message: unknown): message is ValidateGgufResponse {
    if (typeof message !== "object" || message === null)
        return false;
    const {ok, result, error} = message as Record<string, unknown>;
    return (ok === true && typeof result === "object" && result !== null) ||
        (ok === false && typeof error === "object" && error !== null);
}
