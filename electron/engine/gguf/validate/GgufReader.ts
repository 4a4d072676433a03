import {readSync} from "node:fs";
import {GgufValidationError} from "../errors/GgufValidationError.js";

const defaultChunkBytes = 1 << 20;
const twoTo32 = 2 ** 32;

/**
 * Little-endian reads from a file descriptor that never go past the end of the file: every read first checks that
 * enough bytes are left and throws a `truncated` GgufValidationError naming what was being read and where.
 * Reads go through one window buffer that only grows for single reads larger than it (bounded by the caller).
 * The typed readers (`u8` … `i64`) read one little-endian value; `what` names it in the error.
 */
export class GgufReader {
    /** Absolute file offset of the next read. */
    public position = 0;
    public readonly fileSize: number;
    private readonly fd: number;
    private window: Buffer;
    /** File offset of `window[0]`. */
    private windowStart = 0;
    /** Valid bytes in `window`. */
    private windowLength = 0;

    public constructor(fd: number, fileSize: number, chunkBytes = defaultChunkBytes) {
        this.fd = fd;
        this.fileSize = fileSize;
        this.window = Buffer.allocUnsafe(chunkBytes);
    }

    /** Bytes between the read position and the end of the file. */
    public get remaining(): number {
        return this.fileSize - this.position;
    }

    /** Throws `truncated` unless `bytes` more bytes exist (for `what`, e.g. `"key 3 length"`). */
    public need(bytes: number | bigint, what: string): void {
        const short = typeof bytes === "bigint" ? bytes > BigInt(this.remaining) : bytes > this.remaining;
        if (short)
            throw new GgufValidationError(
                "truncated",
                `file ends at byte ${this.fileSize} but ${what} needs ${bytes} bytes from byte ${this.position}`,
                this.position
            );
    }

    public u8(what: string): number {
        return this.window.readUInt8(this.advance(1, what));
    }

    public i8(what: string): number {
        return this.window.readInt8(this.advance(1, what));
    }

    public u16(what: string): number {
        return this.window.readUInt16LE(this.advance(2, what));
    }

    public i16(what: string): number {
        return this.window.readInt16LE(this.advance(2, what));
    }

    public u32(what: string): number {
        return this.window.readUInt32LE(this.advance(4, what));
    }

    public i32(what: string): number {
        return this.window.readInt32LE(this.advance(4, what));
    }

    public f32(what: string): number {
        return this.window.readFloatLE(this.advance(4, what));
    }

    public f64(what: string): number {
        return this.window.readDoubleLE(this.advance(8, what));
    }

    public u64(what: string): bigint {
        return this.window.readBigUInt64LE(this.advance(8, what));
    }

    public i64(what: string): bigint {
        return this.window.readBigInt64LE(this.advance(8, what));
    }

    /**
     * A uint64 as a number, for lengths and counts that are checked against bounds right after:
     * values above 2^53 come back rounded, which is harmless since they exceed every bound.
     */
    public u64Number(what: string): number {
        const at = this.advance(8, what);
        return this.window.readUInt32LE(at + 4) * twoTo32 + this.window.readUInt32LE(at);
    }

    /** `length` raw bytes; the returned view is only valid until the next read. */
    public bytes(length: number, what: string): Buffer {
        const at = this.advance(length, what);
        return this.window.subarray(at, at + length);
    }

    /** `length` bytes decoded as UTF-8 (invalid sequences become U+FFFD). */
    public utf8(length: number, what: string): string {
        const at = this.advance(length, what);
        return this.window.toString("utf8", at, at + length);
    }

    /** The `length` bytes just read, as a view valid until the next read. */
    public justRead(length: number): Buffer {
        const end = this.position - this.windowStart;
        return this.window.subarray(end - length, end);
    }

    /** Fills `target` with the next `target.length` bytes, in window-sized pieces. */
    public readInto(target: Uint8Array, what: string): void {
        this.need(target.length, what);
        let done = 0;
        while (done < target.length) {
            const piece = Math.min(this.window.length, target.length - done);
            target.set(this.bytes(piece, what), done);
            done += piece;
        }
    }

    /** Checks `length` bytes are available, loads them into the window and returns their index in it. */
    private advance(length: number, what: string): number {
        this.need(length, what);
        const start = this.position;
        if (start < this.windowStart || start + length > this.windowStart + this.windowLength)
            this.load(start, length, what);

        this.position = start + length;
        return start - this.windowStart;
    }

    private load(start: number, length: number, what: string): void {
        if (length > this.window.length)
            this.window = Buffer.allocUnsafe(length);

        const wanted = Math.min(this.window.length, this.fileSize - start);
        let got = 0;
        while (got < wanted) {
            const n = readSync(this.fd, this.window, got, wanted - got, start + got);
            if (n === 0)
                break;
            got += n;
        }
        this.windowStart = start;
        this.windowLength = got;
        if (got < length)
            throw new GgufValidationError(
                "truncated",
                `file shrank while reading ${what}: only ${got} of ${length} bytes could be read`,
                start
            );
    }
}
