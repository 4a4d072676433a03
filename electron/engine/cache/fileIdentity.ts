import fs from "node:fs";
import path from "node:path";

/**
 * A file as the caches that learn from its use key it: its absolute path, size and modification time, so a new download
 * at the same path is a new file. The bare absolute path where the file cannot be read.
 */
export function fileIdentity(file: string): string {
    try {
        const stat = fs.statSync(file);
        return `${path.resolve(file)}:${stat.size}:${Math.round(stat.mtimeMs)}`;
    } catch {
        return path.resolve(file);
    }
}
