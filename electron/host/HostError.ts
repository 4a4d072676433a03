import type {ContractError} from "../contract/ipc.js";

/** An error that crosses the contract with a code the UI can branch on (`"engine-crashed"`, `"no-model"`, …). */
export class HostError extends Error {
    constructor(readonly code: string, message: string) {
        super(message);
        this.name = "HostError";
    }

    /** The error as the contract carries it, whatever was thrown. */
    static toContract(error: unknown): ContractError {
        if (error instanceof HostError)
            return {code: error.code, message: error.message};
        if (error != null && typeof error === "object" && "code" in error && typeof error.code === "string" && error instanceof Error)
            return {code: error.code, message: error.message};
        return {code: "host-error", message: error instanceof Error ? error.message : String(error)};
    }
}
