/**
 * Entry of `validateGgufOutOfProcess`'s isolated validator: validates one file, replies once and exits. Runs either as
 * a child process (Node IPC, under `--max-old-space-size`) or as a worker thread (under `resourceLimits`), so a file
 * that would need too much memory or time ends only the child or the worker.
 */
import {parentPort} from "node:worker_threads";
import {GgufValidationError} from "../errors/GgufValidationError.js";
import {validateGgufFileSync} from "../validateGguf.js";
import {isValidateGgufRequest} from "./childProtocol.js";
import type {ValidateGgufResponse} from "./childProtocol.js";

function answer(message: unknown): ValidateGgufResponse {
    if (!isValidateGgufRequest(message))
        return {ok: false, error: {code: "child-failed", detail: "malformed request to the validator child"}};
    try {
        return {ok: true, result: validateGgufFileSync(message.path, message.options)};
    } catch (error) {
        if (error instanceof GgufValidationError)
            return {ok: false, error: {code: error.code, detail: error.detail, ...(error.offset === undefined ? {} : {offset: error.offset})}};
        return {ok: false, error: {code: "child-failed", detail: `validator crashed: ${String(error)}`}};
    }
}

const port = parentPort;
if (port !== null) {
    port.once("message", (message: unknown) => {
        port.postMessage(answer(message));
        port.close();
    });
} else {
    process.once("message", (message: unknown) => {
        if (process.send === undefined)
            throw new Error("validateGgufChild must be started with an IPC channel or as a worker thread");
        process.send(answer(message), undefined, undefined, () => process.disconnect());
    });
}
