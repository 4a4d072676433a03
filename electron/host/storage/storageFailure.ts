/**
 * A write into the app's data folder that failed because the disk is full or the folder cannot be written (a
 * read-only mount, a folder owned by someone else): one sentence for the user and the error code it travels with.
 * Anything else is not a storage failure (`null`) and goes on as it was.
 */
import type {ConversationNotice} from "../../contract/ipc.js";

const FULL = new Set(["ENOSPC", "EDQUOT"]);
const NOT_WRITABLE = new Set(["EROFS", "EACCES", "EPERM"]);

/** The notice for a failed write into `dir`, or `null` when `error` is not about the disk or its permissions. */
export function storageFailure(error: unknown, dir: string): ConversationNotice | null {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code != null && FULL.has(code))
        return {code: "disk-full", message: `The disk holding ${dir} is full (${code}): chats can't be saved until space is freed.`};
    if (code != null && NOT_WRITABLE.has(code))
        return {code: "not-writable", message: `The data folder ${dir} is read-only (${code}): chats can be read but not saved.`};
    return null;
}
