/**
 * A small versioned JSON file in the app's data folder — the model library (model/ModelLibrary.ts), the rpc-server
 * list (rpc/RpcServerList.ts), the server's settings (server/ServerControl.ts): written atomically
 * (writeFileAtomic.ts) as `{version, ...body}`, read with its shape checked by the store, and, where this code cannot
 * read it, moved aside (never overwritten) so the store starts fresh beside it.
 */
import {promises as fs} from "node:fs";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {moveAsideUnreadable, writeFileAtomic} from "./writeFileAtomic.js";

/**
 * The content of `file` as `accept` reads it (given the parsed JSON, or `null` for text that is not JSON), or `null`
 * when there is no file yet. A file `accept` refuses (returns `null` or throws) was not written by this code: it is
 * moved aside for the user to look at, and `null` is returned. A file that cannot be read at all is an `io-error`
 * naming `what` ("the model library").
 */
export async function readJsonFile<T>(file: string, what: string, accept: (parsed: unknown) => T | null): Promise<T | null> {
    let text: string;
    try {
        text = await fs.readFile(file, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            return null;
        throw new TensorwiseError("io-error", `${what} ${file} cannot be read: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch {
        parsed = null;
    }
    let accepted: T | null;
    try {
        accepted = accept(parsed);
    } catch {
        accepted = null;
    }
    if (accepted != null)
        return accepted;
    // not written by this code: keep it for the user to look at, and start fresh beside it
    await moveAsideUnreadable(file);
    return null;
}

/** Writes `body` with its format `version` to `file`, atomically. */
export async function writeJsonFile(file: string, version: number, body: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(file, JSON.stringify({version, ...body}, null, 1));
}
