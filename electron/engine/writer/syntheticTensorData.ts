import {encodeAs, encodedBytes, qkBlockSize, type EncodableType} from "./quantize.js";

/**
 * Cheap, deterministic tensor data for synthetic models: one pool of encoded random weights per type, a few MiB,
 * replayed from a per-tensor starting block. Values do not change speed; they only need to be sane (small weights,
 * unit norms) so that llama.cpp produces finite logits.
 */

/** Standard deviation of synthetic weights (a typical init scale). */
export const syntheticWeightStd = 0.02;
/** Upper bound of one pool, in bytes; also the largest chunk handed to the file writer. */
export const syntheticPoolBytes = 4 << 20;

/** mulberry32: a small, fast 32-bit PRNG; returns uniform floats in [0, 1). */
export function createRandom(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** A 32-bit hash of numbers, for deriving seeds. */
export function mixSeed(...parts: readonly number[]): number {
    let hash = 0x811c9dc5;
    for (const part of parts) {
        hash = Math.imul(hash ^ (part >>> 0), 0x01000193);
        hash ^= hash >>> 13;
    }
    return hash >>> 0;
}

/** Fills `out` with approximately normal values (Irwin–Hall of 4 uniforms) of standard deviation `std`. */
export function fillNormalish(out: Float32Array, random: () => number, std: number): void {
    const scale = std * Math.sqrt(3); // the sum of 4 uniforms has variance 1/3
    for (let i = 0; i < out.length; i++)
        out[i] = (random() + random() + random() + random() - 2) * scale;
}

const typeIds: Readonly<Record<EncodableType, number>> = {f32: 0, f16: 1, bf16: 30, q8_0: 8, q4_0: 2};

/**
 * Encoded random weights of `type`, whole blocks, at most {@link syntheticPoolBytes} and no more than
 * `maxElements` values (so tiny models do not pay for a large pool).
 */
export function makeWeightPool(type: EncodableType, seed: number, maxElements: number): Uint8Array {
    const valuesPerBlock = type === "q8_0" || type === "q4_0" ? qkBlockSize : 1;
    const bytesPerBlock = encodedBytes(type, valuesPerBlock);
    const blocks = Math.max(1, Math.min(Math.floor(syntheticPoolBytes / bytesPerBlock), Math.ceil(maxElements / valuesPerBlock)));
    const random = createRandom(mixSeed(seed, typeIds[type]));
    const pool = new Uint8Array(blocks * bytesPerBlock);
    const stepBlocks = Math.max(1, Math.floor((64 * 1024) / valuesPerBlock)); // encode 64 Ki values at a time
    const values = new Float32Array(stepBlocks * valuesPerBlock);
    for (let block = 0; block < blocks; block += stepBlocks) {
        const count = Math.min(stepBlocks, blocks - block) * valuesPerBlock;
        const slice = values.subarray(0, count);
        fillNormalish(slice, random, syntheticWeightStd);
        encodeAs(type, slice, pool, block * bytesPerBlock);
    }
    return pool;
}

/** F32 bytes of `count` ones (RMS norm weights). */
export function makeOnesF32(count: number): Uint8Array {
    return new Uint8Array(new Float32Array(count).fill(1).buffer);
}

/**
 * Yields `bytes` bytes of `pool` starting at `start` (wrapping around), as subarrays of at most the pool's size.
 * `pool.length`, `start` and `bytes` must be multiples of the type's block bytes so every block stays whole.
 */
export function* replayPool(pool: Uint8Array, start: number, bytes: number): Generator<Uint8Array> {
    let at = start % pool.length;
    for (let left = bytes; left > 0;) {
        const take = Math.min(left, pool.length - at);
        yield pool.subarray(at, at + take);
        left -= take;
        at = (at + take) % pool.length;
    }
}
