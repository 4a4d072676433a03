/** The data folder web mode and the CLI share (`<data dir>/models`, `recent-models.json`, conversations). */
import os from "node:os";
import path from "node:path";

/** `TENSORWISE_DATA_DIR`, else `~/.tensorwise`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
    return path.resolve(env.TENSORWISE_DATA_DIR ?? path.join(os.homedir(), ".tensorwise"));
}

/** Where models live in a data folder: drag-and-drop uploads and `tensorwise pull` land here. */
export function modelsDirOf(dataDir: string): string {
    return path.join(dataDir, "models");
}
