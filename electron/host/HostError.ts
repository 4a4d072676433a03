import type {ErrorCode} from "../contract/errorCodes.js";
import {toContractError, type ContractError} from "../contract/TensorwiseError.js";

/** An error that crosses the contract with a code the UI can branch on (`"engine-crashed"`, `"no-model"`, …). */
export class HostError extends Error {
    constructor(readonly code: ErrorCode, message: string) {
        super(message);
        this.name = "HostError";
    }

    /** The error as the contract carries it, whatever was thrown. */
    static toContract(error: unknown): ContractError {
        return toContractError(error, "internal");
    }
}
