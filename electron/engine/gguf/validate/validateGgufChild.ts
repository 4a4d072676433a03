/**
 * Child-process entry of `validateGgufOutOfProcess`: validates one file, replies once and exits.
 * Runs under `--max-old-space-size`, so a file that would need too much memory kills only this process.
 */
import {GgufValidationError} from "../errors/GgufValidationError.js";
import {validateGgufFileSync} from "../validateGguf.js";
import {isValidateGgufRequest} from "./childProtocol.js";
import type {ValidateGgufResponse} from "./childProtocol.js";

function respond(response: ValidateGgufResponse): void {
    if (process.send === undefined)
        throw new Error("validateGgufChild must be started with an IPC channel");
    process.send(response, undefined, undefined, () => process.disconnect());
}

function handle(message: unknown): void {
    if (!isValidateGgufRequest(message)) {
        respond({ok: false, error: {code: "child-failed", detail: "malformed request to the validator child"}});
        return;
    }
    try {
        respond({ok: true, result: validateGgufFileSync(message.path, message.options)});
    } catch (error) {
        if (error instanceof GgufValidationError)
            respond({ok: false, error: {code: error.code, detail: error.detail, ...(error.offset === undefined ? {} : {offset: error.offset})}});
        else
            respond({ok: false, error: {code: "child-failed", detail: `validator crashed: ${String(error)}`}});
    }
}

process.once("message", handle);
