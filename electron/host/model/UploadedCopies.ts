/**
 * Copies of models that a browser uploaded into the models folder (web mode, electron/web/receiveUpload.ts) and that
 * have not been opened yet. When validation rejects one as malformed it is deleted: it can never be opened, and it is
 * the app's copy, not the user's file (which stays where the user dragged it from). A copy that passes is kept.
 */
import {promises as fs} from "node:fs";
import path from "node:path";
import {isMalformedFileCode} from "../../contract/errorCodes.js";
import {toContractError, TensorwiseError} from "../../contract/TensorwiseError.js";

export class UploadedCopies {
    private readonly pending = new Set<string>();

    /** An upload stored a new file at `modelPath`. */
    add(modelPath: string): void {
        this.pending.add(path.resolve(modelPath));
    }

    /** `modelPath` opened: if it was an upload, it is kept from now on. */
    accepted(modelPath: string): void {
        this.pending.delete(path.resolve(modelPath));
    }

    /**
     * Opening `modelPath` failed with `error`. An uploaded copy that the validator found malformed is deleted, and the
     * error returned says so; anything else returns `error` as it was (the copy stays for another try).
     */
    async rejected(modelPath: string, error: unknown): Promise<unknown> {
        const resolved = path.resolve(modelPath);
        const contract = toContractError(error);
        if (!this.pending.has(resolved) || !isMalformedFileCode(contract.code))
            return error;
        this.pending.delete(resolved);
        await fs.rm(resolved, {force: true});
        return new TensorwiseError(contract.code, `${contract.message}. The uploaded copy was deleted from the models folder.`);
    }
}
