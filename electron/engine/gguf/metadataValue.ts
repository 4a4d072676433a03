import type {GgufMetadataValue} from "./types/ValidatedGguf.js";

type Metadata = ReadonlyMap<string, GgufMetadataValue>;

/** A bigint as a number when exactly representable, else `undefined`. */
function safeNumber(value: bigint): number | undefined {
    const asNumber = Number(value);
    return Number.isSafeInteger(asNumber) ? asNumber : undefined;
}

/**
 * A numeric scalar as a number: any integer or float type (64-bit integers only when exactly representable);
 * `undefined` when the key is missing or holds something else.
 */
export function metadataNumber(metadata: Metadata, key: string): number | undefined {
    const entry = metadata.get(key);
    if (entry === undefined || entry.type === "array" || entry.type === "string" || entry.type === "bool")
        return undefined;
    return typeof entry.value === "bigint" ? safeNumber(entry.value) : entry.value;
}

/** A string scalar, or `undefined`. */
export function metadataString(metadata: Metadata, key: string): string | undefined {
    const entry = metadata.get(key);
    return entry?.type === "string" ? entry.value : undefined;
}

/**
 * A numeric scalar, or a numeric array as `number[]` (llama.cpp allows per-layer values for e.g.
 * `<arch>.attention.head_count`); `undefined` for anything else.
 */
export function metadataNumberOrNumbers(metadata: Metadata, key: string): number | number[] | undefined {
    const entry = metadata.get(key);
    if (entry?.type !== "array")
        return metadataNumber(metadata, key);
    switch (entry.elementType) {
        case "string": case "bool": case "array":
            return undefined;
        case "uint64": case "int64": {
            const values: number[] = [];
            for (const value of entry.value) {
                const asNumber = safeNumber(value);
                if (asNumber === undefined)
                    return undefined;
                values.push(asNumber);
            }
            return values;
        }
        default:
            return Array.from(entry.value);
    }
}

/** Number of elements of an array entry, or `undefined`. */
export function metadataArrayLength(metadata: Metadata, key: string): number | undefined {
    const entry = metadata.get(key);
    return entry?.type === "array" ? entry.value.length : undefined;
}
