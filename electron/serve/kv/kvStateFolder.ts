/**
 * The folder that holds swapped-out KV state files: private to one server, named for its process so a later start can
 * tell a folder left behind by a killed process (`kill -9` runs no cleanup) from one still in use, and the disk budget
 * those files may take.
 */
import {mkdtemp, readdir, rm, statfs} from "node:fs/promises";
import path from "node:path";

/** Every state folder's name starts with this, then the owner's pid and a dash. */
export const KV_FOLDER_PREFIX = "tensorwise-kv-";

/** How much disk the state files may take: MiB, or a percentage of the folder's free space when the server starts. */
export type KvDiskBudget = {kind: "mib"; mib: number} | {kind: "percent-free"; percent: number};

/** By default state files may take this share of the free space (the rest of the disk belongs to the user). */
export const DEFAULT_KV_DISK_BUDGET: Readonly<KvDiskBudget> = Object.freeze({kind: "percent-free", percent: 10});

/**
 * Removes the state folders in `dir` whose owner process is gone, then makes this process's own. Folders of live
 * processes (this one's other servers included) are left alone; a folder that cannot be removed (another user's) too.
 * Returns the new folder and the folders removed.
 */
export async function makeKvStateFolder(dir: string): Promise<{folder: string; removed: string[]}> {
    const removed: string[] = [];
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
        const pid = ownerPid(name);
        if (pid == null || processAlive(pid))
            continue;
        try {
            await rm(path.join(dir, name), {recursive: true, force: true});
            removed.push(name);
        } catch {
            // not ours to remove (another user's temp folder): left as it is
        }
    }
    const folder = await mkdtemp(path.join(dir, `${KV_FOLDER_PREFIX}${process.pid}-`));
    return {folder, removed};
}

/** The pid in a state folder's name, or `null` for any other name. */
export function ownerPid(name: string): number | null {
    const match = new RegExp(`^${KV_FOLDER_PREFIX}(\\d{1,10})-[^/]+$`).exec(name);
    const pid = match == null ? NaN : Number(match[1]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/** Whether a process with this pid exists (signal 0 only checks; EPERM: it exists but is another user's). */
function processAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
}

/** The budget in bytes for state files in `folder`. */
export async function kvDiskBudgetBytes(folder: string, budget: KvDiskBudget): Promise<number> {
    if (budget.kind === "mib")
        return Math.floor(budget.mib * 1024 * 1024);
    const stats = await statfs(folder);
    // bavail: the blocks an unprivileged process may still fill
    return Math.floor(Number(stats.bavail) * Number(stats.bsize) * budget.percent / 100);
}
