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

/** GGUF codes about the validation run rather than the file: the file may still be good. */
const VALIDATION_RUN_CODES: ReadonlySet<string> = new Set<GgufErrorCode>(["io-error", "timeout", "out-of-memory", "child-failed"]);

/** Whether `code` is a verdict that the file itself is malformed (not a failure to read or check it). */
export function isMalformedFileCode(code: string): boolean {
    return Object.hasOwn(GGUF_ERROR_SENTENCES, code) && !VALIDATION_RUN_CODES.has(code);
}

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
    "not-writable": "The app's data folder cannot be written: chats can be read but not saved.",
    "damaged-conversation": "A saved conversation could not be read.",
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
    "not-enough-memory": "There is not enough free memory for this placement's weights, KV cache and scratch.",
    "conversation-too-long": "The conversation does not fit in the model's context.",
    "load-failed": "The model could not be loaded with this placement.",
    "bad-draft": "This speculative decoding cannot run with this model.",
    "bench-running": "A benchmark is running.",
    "server-failed": "The OpenAI-compatible server could not start.",
    "rpc-unreachable": "No rpc-server answers at that address.",
    "hub-error": "The model hub could not give what was asked for.",
    // tools
    "tools-unsupported": "This model's chat template has no tool-call syntax, so its replies cannot call tools.",
    "tool-server-failed": "An MCP server this chat's tools need could not start.",
    // anything else
    "internal": "Something went wrong inside the app."
} as const;

/** What a user can do about an error, for the codes where the app knows; shown after the code's sentence. */
const FILE_DAMAGED_FIX = "Download the model again (compare its size with the source) and open the new copy.";
const BAD_CONVERSION_FIX = "The file was written by a faulty converter: get the model from another source or convert it again with a current llama.cpp.";
const GGUF_ERROR_FIXES: {[Code in GgufErrorCode]: string} = {
    "truncated": FILE_DAMAGED_FIX,
    "bad-magic": "Open the .gguf model file itself, not an archive, a partial download or a web page saved under that name.",
    "bad-version": "Convert the model again with a current llama.cpp (GGUF version 2 or 3).",
    "count-too-large": FILE_DAMAGED_FIX,
    "string-too-long": FILE_DAMAGED_FIX,
    "metadata-too-large": BAD_CONVERSION_FIX,
    "bad-value-type": FILE_DAMAGED_FIX,
    "array-too-deep": BAD_CONVERSION_FIX,
    "bad-key": FILE_DAMAGED_FIX,
    "empty-key": BAD_CONVERSION_FIX,
    "duplicate-key": BAD_CONVERSION_FIX,
    "bad-alignment": FILE_DAMAGED_FIX,
    "bad-tensor-name": FILE_DAMAGED_FIX,
    "duplicate-tensor": BAD_CONVERSION_FIX,
    "bad-dims": FILE_DAMAGED_FIX,
    "dims-overflow": FILE_DAMAGED_FIX,
    "unknown-type": "Use a model quantized to a type llama.cpp supports (F16, Q8_0, Q4_K_M …), or update tensorwise.",
    "bad-row-size": FILE_DAMAGED_FIX,
    "misaligned-offset": FILE_DAMAGED_FIX,
    "out-of-bounds": FILE_DAMAGED_FIX,
    "overlap": FILE_DAMAGED_FIX,
    "gap": FILE_DAMAGED_FIX,
    "duplicate-token": BAD_CONVERSION_FIX,
    "bad-vocab": BAD_CONVERSION_FIX,
    "missing-hparam": BAD_CONVERSION_FIX,
    "bad-hparam": BAD_CONVERSION_FIX,
    "layer-mismatch": BAD_CONVERSION_FIX,
    "bad-experts": BAD_CONVERSION_FIX,
    "missing-tensor": BAD_CONVERSION_FIX,
    "shape-mismatch": BAD_CONVERSION_FIX,
    "io-error": "Check that the file is still there and readable (not on a disconnected drive), then open it again.",
    "timeout": "Open it again when the machine is less busy; if it fails again, the file is probably damaged.",
    "out-of-memory": "Close other programs and open it again; if it fails again, the file is probably damaged.",
    "child-failed": "Open it again; if it fails again, the file is probably damaged."
};

/** Suggested fixes, one per code where there is something to do; codes without one (`aborted`) are left out. */
export const ERROR_FIXES: {readonly [Code in ErrorCode]?: string} = {
    ...GGUF_ERROR_FIXES,
    "unknown-request": "Reload the page, or restart the app so that the page and the host are the same version.",
    "bad-token": "Open the address web mode printed when it started (it carries the token).",
    "no-event-stream": "Reload the page.",
    "too-large": "Type the model's path instead of dragging it in: it is then opened where it is, without a copy.",
    "not-found": "Check the path, or drag the file onto the window.",
    "bad-path": "Type the full path of the .gguf file, starting with / (or a drive letter).",
    "bad-name": "Choose a file whose name ends in .gguf.",
    "path-not-allowed": "Drag the file onto the window instead, or move it into the app's models folder.",
    "disk-full": "Free some disk space, or type the model's path to open it where it is, without a copy.",
    "not-writable": "Free disk space or make the data folder writable, then restart the app.",
    "damaged-conversation": "The file was moved, unchanged, into the conversations folder's damaged/ folder; open it there to recover its text.",
    "upload-aborted": "Drag the file in again.",
    "upload-failed": "Drag the file in again; if it fails again, type its path instead.",
    "busy": "Wait for the current task to finish, then try again.",
    "engine-crashed": "Press Restart engine: the last model is loaded again with the same placement.",
    "engine-not-running": "Wait a few seconds for the engine to start, then try again.",
    "engine-start-failed": "Restart the app; if it fails again, reinstall it with `npm ci`.",
    "engine-start-timeout": "Close other busy programs and restart the app.",
    "no-backend": "Choose the CPU (Auto-offload plans without a GPU), or install the GPU's Vulkan or CUDA driver and restart the app.",
    "no-model": "Open a model on the Model screen and press Auto-offload.",
    "bad-placement": "Run Auto-offload again to plan for this model and machine.",
    "context-too-large": "Lower the context size on the Auto-offload screen and load again.",
    "conversation-too-long": "Start a new chat, let the chat leave out earlier messages (\"When the context is full\" in its settings), or load the model with a larger context.",
    "not-enough-memory": "Lower the memory budget or the context size on the Auto-offload screen, or close programs that use the GPU, then load again.",
    "load-failed": "Try a smaller memory budget or context size; if it fails again, the file may be damaged: download it again.",
    "bad-draft": "Choose another kind of speculative decoding (or none), or a draft model of the model's family that is smaller than it.",
    "bench-running": "Wait for the benchmark to finish, or stop it on the Benchmark screen.",
    "rpc-unreachable": "Start `tensorwise rpc-server --host 0.0.0.0` on that machine, check the address and port, then add it again.",
    "tools-unsupported": "Turn the tools off in this chat's settings, or load a model whose chat template calls tools (Qwen 2.5, Hermes, Llama 3.1 and later).",
    "tool-server-failed": "See the server's error and log on the Tools screen; fix its command or turn its tools off in this chat's settings."
};

/** The codes errors cross the contract with. */
export type ErrorCode = keyof typeof ERROR_SENTENCES;

export function isErrorCode(value: unknown): value is ErrorCode {
    return typeof value === "string" && Object.hasOwn(ERROR_SENTENCES, value);
}

/** The sentence a user is shown for `code`. */
export function errorSentence(code: ErrorCode): string {
    return ERROR_SENTENCES[code];
}

/** What a user can do about `code`, or `null` when there is nothing to suggest. */
export function errorFix(code: ErrorCode): string | null {
    return ERROR_FIXES[code] ?? null;
}
