/**
 * Every error code that crosses a process boundary (engine → host → renderer, CLI output), each with the sentence a
 * user is shown for it. The message that travels with a code says what exactly went wrong; the sentence says what
 * kind of problem it is, in words, for codes a screen does not handle itself.
 */

/** Why a GGUF file was rejected: file-format codes, then model codes, then the validation run itself. */
export const GGUF_ERROR_SENTENCES = {
    "truncated": "The model file ends early: it is incomplete or was cut off while copying.",
    "bad-magic": "This is not a GGUF file.",
    "bad-version": "This GGUF version is not supported.",
    "count-too-large": "The model file declares more entries than it holds.",
    "string-too-long": "The model file declares a string longer than the file.",
    "metadata-too-large": "The model file's metadata is too large to read safely.",
    "bad-value-type": "The model file holds a metadata value of an unknown type.",
    "array-too-deep": "The model file nests metadata arrays too deeply.",
    "bad-key": "The model file has a malformed metadata key.",
    "empty-key": "The model file has an empty metadata key.",
    "duplicate-key": "The model file repeats a metadata key.",
    "bad-alignment": "The model file declares an invalid alignment.",
    "bad-tensor-name": "The model file has a malformed tensor name.",
    "duplicate-tensor": "The model file repeats a tensor.",
    "bad-dims": "The model file has a tensor with invalid dimensions.",
    "dims-overflow": "The model file has a tensor too large to address.",
    "unknown-type": "The model file uses a tensor type this build does not know.",
    "bad-row-size": "The model file has a tensor whose rows do not fit its type's blocks.",
    "misaligned-offset": "The model file has a misaligned tensor.",
    "out-of-bounds": "The model file points past its own end.",
    "overlap": "The model file has overlapping tensors.",
    "gap": "The model file has unexplained gaps between tensors.",
    "duplicate-token": "The model's vocabulary repeats a token, which would stop llama.cpp.",
    "bad-vocab": "The model's vocabulary is broken.",
    "missing-hparam": "The model lacks a setting llama.cpp needs.",
    "bad-hparam": "The model has a setting llama.cpp would refuse.",
    "layer-mismatch": "The model's tensors do not match its layer count.",
    "bad-experts": "The model's expert settings are inconsistent.",
    "missing-tensor": "The model lacks a tensor its architecture needs.",
    "shape-mismatch": "A tensor's shape does not match the model's settings.",
    "io-error": "The model file could not be read.",
    "timeout": "Checking the model file took too long.",
    "out-of-memory": "Checking the model file needed too much memory.",
    "child-failed": "The model file checker stopped unexpectedly."
} as const;

export type GgufErrorCode = keyof typeof GGUF_ERROR_SENTENCES;

/** Every code with its sentence. */
export const ERROR_SENTENCES = {
    ...GGUF_ERROR_SENTENCES,
    // requests and transports
    "bad-request": "The request was not valid.",
    "unknown-request": "The engine host does not know this request: the app and the host are different versions.",
    "untrusted-sender": "The request came from a page the app does not trust.",
    "bad-host": "The request named an unexpected host.",
    "bad-origin": "The request came from another site.",
    "bad-token": "The request carried a missing or wrong access token: open the address web mode printed.",
    "method": "The request used a method this address does not accept.",
    "no-event-stream": "The page lost its event stream: reload it.",
    "too-large": "The request or upload is too large.",
    // files and paths
    "not-found": "It does not exist (any more).",
    "bad-path": "The path is not valid.",
    "bad-name": "Only GGUF models (.gguf) can be opened.",
    "path-not-allowed": "The app may not open files in that folder.",
    "disk-full": "The disk is full.",
    "upload-aborted": "The upload was interrupted.",
    "upload-failed": "The upload could not be stored.",
    "bad-out-dir": "The report folder cannot be written.",
    "bad-report": "The benchmark's report is unreadable.",
    // the engine
    "busy": "The engine is busy with another task.",
    "aborted": "It was cancelled.",
    "engine-crashed": "The engine stopped unexpectedly: restart it.",
    "engine-stopped": "The engine was stopped.",
    "engine-missing": "The engine is not built: run `npm run build`.",
    "engine-not-running": "The engine is not running yet.",
    "engine-start-failed": "The engine could not start.",
    "engine-start-timeout": "The engine took too long to start.",
    "engine-error": "The engine could not do this.",
    "unpatched-binary": "The llama.cpp build is not the patched one this app needs: reinstall with `npm ci`.",
    "no-backend": "No llama.cpp build for the chosen device is available.",
    // models, plans and benchmarks
    "no-model": "No model is loaded.",
    "bad-placement": "The placement does not fit this model or machine.",
    "context-too-large": "The context size is too large for this model or this machine's memory.",
    "bench-running": "A benchmark is running.",
    "server-failed": "The OpenAI-compatible server could not start.",
    // anything else
    "internal": "Something went wrong inside the app."
} as const;

/** The codes errors cross the contract with. */
export type ErrorCode = keyof typeof ERROR_SENTENCES;

export function isErrorCode(value: unknown): value is ErrorCode {
    return typeof value === "string" && Object.hasOwn(ERROR_SENTENCES, value);
}

/** The sentence a user is shown for `code`. */
export function errorSentence(code: ErrorCode): string {
    return ERROR_SENTENCES[code];
}
