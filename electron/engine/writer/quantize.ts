/**
 * Encoders from float32 values to the bytes of ggml tensor types, bit-exact with ggml's reference (CPU, scalar) code.
 *
 * All arithmetic is done in float32 (`Math.fround` after every operation) so that results match C `float` math.
 * Byte order is little-endian, as in GGUF files.
 */

/** Elements per Q8_0 / Q4_0 block. source: ggml-common.h `QK8_0`, `QK4_0` */
export const qkBlockSize = 32;
/** Bytes per Q8_0 block: an f16 scale and 32 int8. source: ggml-common.h `block_q8_0` */
export const q8_0BlockBytes = 34;
/** Bytes per Q4_0 block: an f16 scale and 32 nibbles. source: ggml-common.h `block_q4_0` */
export const q4_0BlockBytes = 18;

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

function floatBits(value: number): number {
    scratchF32[0] = value;
    return scratchU32[0] ?? 0;
}

function floatFromBits(bits: number): number {
    scratchU32[0] = bits;
    return scratchF32[0] ?? 0;
}

const scaleToInf = 2 ** 112;
const scaleToZero = 2 ** -110;

/**
 * IEEE half-precision bits of a float (round to nearest even; NaN becomes `0x7E00` with the sign kept).
 *
 * source: ggml-impl.h `ggml_compute_fp32_to_fp16` (from the FP16 library by Maratyszcza)
 */
export function fp32ToFp16Bits(value: number): number {
    const f = Math.fround(value);
    let base = Math.fround(Math.fround(Math.abs(f) * scaleToInf) * scaleToZero);

    const w = floatBits(f);
    const shl1W = (w + w) >>> 0;
    const sign = (w & 0x80000000) >>> 0;
    let bias = (shl1W & 0xff000000) >>> 0;
    if (bias < 0x71000000)
        bias = 0x71000000;

    base = Math.fround(floatFromBits((bias >>> 1) + 0x07800000) + base);
    const bits = floatBits(base);
    const expBits = (bits >>> 13) & 0x00007c00;
    const mantissaBits = bits & 0x00000fff;
    const nonSign = expBits + mantissaBits;
    return ((sign >>> 16) | (shl1W > 0xff000000 ? 0x7e00 : nonSign)) & 0xffff;
}

/** The float value of IEEE half-precision bits (exact). */
export function fp16BitsToFp32(bits: number): number {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >>> 10) & 0x1f;
    const mantissa = bits & 0x3ff;
    if (exponent === 0)
        return sign * mantissa * 2 ** -24;
    if (exponent === 0x1f)
        return mantissa === 0 ? sign * Infinity : NaN;
    return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/**
 * bfloat16 bits of a float (round to nearest even; NaN is kept quiet).
 *
 * source: ggml-impl.h `ggml_compute_fp32_to_bf16`
 */
export function fp32ToBf16Bits(value: number): number {
    const u = floatBits(value);
    if ((u & 0x7fffffff) >>> 0 > 0x7f800000)
        return ((u >>> 16) | 64) & 0xffff;
    return ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16) & 0xffff;
}

function checkRoom(dst: Uint8Array, dstOffset: number, bytes: number): void {
    if (dstOffset < 0 || dstOffset + bytes > dst.length)
        throw new RangeError(`destination too small: need ${bytes} bytes at offset ${dstOffset}, have ${dst.length}`);
}

function checkBlocks(src: Float32Array, typeName: string): number {
    if (src.length % qkBlockSize !== 0)
        throw new RangeError(`${typeName} input of ${src.length} values is not a multiple of ${qkBlockSize}`);
    return src.length / qkBlockSize;
}

/** Writes `src` as F32 into `dst` at `dstOffset`; returns the bytes written. */
export function encodeF32(src: Float32Array, dst: Uint8Array, dstOffset = 0): number {
    const bytes = src.length * 4;
    checkRoom(dst, dstOffset, bytes);
    new Uint8Array(dst.buffer, dst.byteOffset + dstOffset, bytes).set(new Uint8Array(src.buffer, src.byteOffset, bytes));
    return bytes;
}

/** Writes `src` as F16 into `dst` at `dstOffset`; returns the bytes written. */
export function encodeF16(src: Float32Array, dst: Uint8Array, dstOffset = 0): number {
    checkRoom(dst, dstOffset, src.length * 2);
    for (let i = 0, o = dstOffset; i < src.length; i++, o += 2) {
        const half = fp32ToFp16Bits(src[i] ?? 0);
        dst[o] = half & 0xff;
        dst[o + 1] = half >>> 8;
    }
    return src.length * 2;
}

/** Writes `src` as BF16 into `dst` at `dstOffset`; returns the bytes written. */
export function encodeBf16(src: Float32Array, dst: Uint8Array, dstOffset = 0): number {
    checkRoom(dst, dstOffset, src.length * 2);
    for (let i = 0, o = dstOffset; i < src.length; i++, o += 2) {
        const half = fp32ToBf16Bits(src[i] ?? 0);
        dst[o] = half & 0xff;
        dst[o + 1] = half >>> 8;
    }
    return src.length * 2;
}

/** C `roundf`: round half away from zero. */
function roundHalfAwayFromZero(value: number): number {
    return value < 0 ? -Math.round(-value) : Math.round(value);
}

/**
 * Writes `src` (a multiple of 32 values) as Q8_0 blocks into `dst` at `dstOffset`; returns the bytes written.
 *
 * source: ggml-quants.c `quantize_row_q8_0_ref`
 */
export function encodeQ8_0(src: Float32Array, dst: Uint8Array, dstOffset = 0): number {
    const blocks = checkBlocks(src, "q8_0");
    checkRoom(dst, dstOffset, blocks * q8_0BlockBytes);
    for (let b = 0; b < blocks; b++) {
        const first = b * qkBlockSize;
        let amax = 0;
        for (let j = 0; j < qkBlockSize; j++) {
            const v = Math.abs(src[first + j] ?? 0);
            amax = amax > v ? amax : v;
        }

        const d = Math.fround(amax / 127);
        const id = d !== 0 ? Math.fround(1 / d) : 0;
        const half = fp32ToFp16Bits(d);
        const o = dstOffset + b * q8_0BlockBytes;
        dst[o] = half & 0xff;
        dst[o + 1] = half >>> 8;
        for (let j = 0; j < qkBlockSize; j++)
            dst[o + 2 + j] = roundHalfAwayFromZero(Math.fround((src[first + j] ?? 0) * id)) & 0xff;
    }
    return blocks * q8_0BlockBytes;
}

/**
 * Writes `src` (a multiple of 32 values) as Q4_0 blocks into `dst` at `dstOffset`; returns the bytes written.
 *
 * source: ggml-quants.c `quantize_row_q4_0_ref`
 */
export function encodeQ4_0(src: Float32Array, dst: Uint8Array, dstOffset = 0): number {
    const blocks = checkBlocks(src, "q4_0");
    const half = qkBlockSize / 2;
    checkRoom(dst, dstOffset, blocks * q4_0BlockBytes);
    for (let b = 0; b < blocks; b++) {
        const first = b * qkBlockSize;
        let amax = 0;
        let max = 0;
        for (let j = 0; j < qkBlockSize; j++) {
            const v = src[first + j] ?? 0;
            if (amax < Math.abs(v)) {
                amax = Math.abs(v);
                max = v;
            }
        }

        const d = Math.fround(max / -8);
        const id = d !== 0 ? Math.fround(1 / d) : 0;
        const dBits = fp32ToFp16Bits(d);
        const o = dstOffset + b * q4_0BlockBytes;
        dst[o] = dBits & 0xff;
        dst[o + 1] = dBits >>> 8;
        for (let j = 0; j < half; j++) {
            const x0 = Math.fround((src[first + j] ?? 0) * id);
            const x1 = Math.fround((src[first + half + j] ?? 0) * id);
            const xi0 = Math.min(15, Math.trunc(Math.fround(x0 + 8.5))) & 0xff;
            const xi1 = Math.min(15, Math.trunc(Math.fround(x1 + 8.5))) & 0xff;
            dst[o + 2 + j] = (xi0 | (xi1 << 4)) & 0xff;
        }
    }
    return blocks * q4_0BlockBytes;
}

/** Tensor types this module can encode. */
export type EncodableType = "f32" | "f16" | "bf16" | "q8_0" | "q4_0";

/** Bytes that `count` values (a multiple of 32 for q8_0 / q4_0) take when encoded as `type`. */
export function encodedBytes(type: EncodableType, count: number): number {
    switch (type) {
        case "f32": return count * 4;
        case "f16": return count * 2;
        case "bf16": return count * 2;
        case "q8_0": return (count / qkBlockSize) * q8_0BlockBytes;
        case "q4_0": return (count / qkBlockSize) * q4_0BlockBytes;
    }
}

/** Writes `src` encoded as `type` into `dst` at `dstOffset`; returns the bytes written. */
export function encodeAs(type: EncodableType, src: Float32Array, dst: Uint8Array, dstOffset = 0): number {
    switch (type) {
        case "f32": return encodeF32(src, dst, dstOffset);
        case "f16": return encodeF16(src, dst, dstOffset);
        case "bf16": return encodeBf16(src, dst, dstOffset);
        case "q8_0": return encodeQ8_0(src, dst, dstOffset);
        case "q4_0": return encodeQ4_0(src, dst, dstOffset);
    }
}
