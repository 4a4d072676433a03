/**
 * Remembers which model files passed validation, so opening the same file again skips the out-of-process check —
 * but only the same file with the same bytes. A file's path, size and mtime are not enough: a file replaced in place
 * by another of the same size, with its mtime set back (`touch -r`), would skip validation and reach llama.cpp. An
 * entry here holds the file's identity (device, inode, ctime — which no user call can set —, size, mtime, all at
 * nanosecond precision) and a SHA-256 of the bytes the validator reads (the header: metadata and tensor table, up to
 * where the tensor data starts); both must match for a hit.
 */
import {createHash} from "node:crypto";
import {open, type FileHandle} from "node:fs/promises";

/** The file identity an entry is valid for, as `fstat` reports it. */
type Identity = string;

type Entry<T> = {identity: Identity; headerBytes: number; headerHash: string; value: T};

/** What a validation returns: its result, and how many leading bytes of the file it read (where the tensor data starts). */
export type Validated<T> = {value: T; headerBytes: number};

async function identityOf(handle: FileHandle): Promise<Identity> {
    const stat = await handle.stat({bigint: true});
    return [stat.dev, stat.ino, stat.ctimeNs, stat.size, stat.mtimeNs].join(":");
}

async function hashHead(handle: FileHandle, bytes: number): Promise<string> {
    const hash = createHash("sha256");
    const chunk = Buffer.alloc(Math.min(bytes, 1 << 20));
    for (let position = 0; position < bytes;) {
        const {bytesRead} = await handle.read(chunk, 0, Math.min(chunk.length, bytes - position), position);
        if (bytesRead === 0)
            break;
        hash.update(chunk.subarray(0, bytesRead));
        position += bytesRead;
    }
    return hash.digest("hex");
}

/** Validation results per path, each valid only while the file keeps its identity and header bytes. */
export class ValidatedFileCache<T> {
    private readonly entries = new Map<string, Entry<T>>();

    /**
     * The cached result for `file` if it is still the file that was validated, else `validate(file)` (whose result is
     * kept only if the file did not change while it ran). `key`, defaulting to `file`, is what the result is kept
     * under: a model's path where `file` is that path pinned for one load (pinModelFile.ts).
     */
    async get(file: string, validate: (file: string) => Promise<Validated<T>>, key = file): Promise<T> {
        const cached = this.entries.get(key);
        const before = await this.fingerprint(file, cached?.headerBytes);
        if (cached != null && before.identity === cached.identity && before.headerHash === cached.headerHash)
            return cached.value;
        this.entries.delete(key);
        const {value, headerBytes} = await validate(file);
        const after = await this.fingerprint(file, headerBytes);
        // a file that changed while it was checked is not cached: the next open checks it again
        if (after.identity === before.identity)
            this.entries.set(key, {identity: after.identity, headerBytes, headerHash: after.headerHash, value});
        return value;
    }

    private async fingerprint(file: string, headerBytes: number | undefined): Promise<{identity: Identity; headerHash: string}> {
        const handle = await open(file, "r");
        try {
            const identity = await identityOf(handle);
            return {identity, headerHash: headerBytes == null ? "" : await hashHead(handle, headerBytes)};
        } finally {
            await handle.close();
        }
    }
}
