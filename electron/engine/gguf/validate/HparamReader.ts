import {GgufValidationError} from "../errors/GgufValidationError.js";
import type {GgufMetadataValue} from "../types/ValidatedGguf.js";
import {quoteFileText} from "./quoteFileText.js";

/** llama.cpp keeps hyper-parameters in `uint32_t`. */
const maxUint32 = 2 ** 32 - 1;
const integerTypes: ReadonlySet<string> = new Set(["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]);

/**
 * Reads `<arch>.<name>` hyper-parameters the way llama.cpp's `llama_model_loader::get_key` / `get_key_or_arr` do,
 * rejecting values it cannot hold (not an integer, negative, above 2^32 − 1) and per-layer arrays of the wrong
 * length with a `GgufValidationError` that names the key.
 */
export class HparamReader {
    public constructor(private readonly metadata: ReadonlyMap<string, GgufMetadataValue>, public readonly arch: string) {}

    /** The metadata key of `name`, e.g. `llama.block_count`. */
    public key(name: string): string {
        return `${this.arch}.${name}`;
    }

    /** The key as it appears in messages: quoted, capped and printable (the architecture is file content). */
    public label(name: string): string {
        return quoteFileText(this.key(name), 64);
    }

    /** Whether `name` is stored as a per-layer array. */
    public isPerLayerArray(name: string): boolean {
        return this.metadata.get(this.key(name))?.type === "array";
    }

    /** Rejects with `bad-hparam` unless every value (one per layer, or a scalar repeated) is positive. */
    public requirePositive(name: string, values: readonly number[]): void {
        const zeroAt = values.indexOf(0);
        if (zeroAt !== -1)
            throw new GgufValidationError(
                "bad-hparam",
                `${this.label(name)} is 0${this.isPerLayerArray(name) ? ` for layer ${zeroAt}` : ""}, ` +
                    "but llama.cpp needs it to be positive"
            );
    }

    /** A scalar integer in 0…2^32 − 1; `undefined` when absent and not `required`. */
    public count(name: string, required: false): number | undefined;
    public count(name: string, required: true): number;
    public count(name: string, required: boolean): number | undefined;
    public count(name: string, required: boolean): number | undefined {
        const entry = this.metadata.get(this.key(name));
        if (entry === undefined)
            return this.missing(name, required);
        if (entry.type === "array" || !integerTypes.has(entry.type))
            throw new GgufValidationError("bad-hparam", `${this.label(name)} must be a whole number, but it is ${describeType(entry)}`);
        return this.checkRange(name, entry.value as number | bigint);
    }

    /**
     * A scalar repeated for each of `layers` layers, or a per-layer array of exactly `layers` integers;
     * `undefined` when absent and not `required`.
     */
    public perLayer(name: string, layers: number, required: false): number[] | undefined;
    public perLayer(name: string, layers: number, required: true): number[];
    public perLayer(name: string, layers: number, required: boolean): number[] | undefined;
    public perLayer(name: string, layers: number, required: boolean): number[] | undefined {
        const entry = this.metadata.get(this.key(name));
        if (entry === undefined)
            return this.missing(name, required);
        if (entry.type !== "array")
            return new Array<number>(layers).fill(this.count(name, true));
        if (!integerTypes.has(entry.elementType))
            throw new GgufValidationError(
                "bad-hparam", `${this.label(name)} must be a whole number or one per layer, but it is ${describeType(entry)}`
            );
        if (entry.value.length !== layers)
            throw new GgufValidationError(
                "bad-hparam",
                `${this.label(name)} lists ${entry.value.length} per-layer values, but ${this.label("block_count")} is ${layers}`
            );
        return Array.from(entry.value as ArrayLike<number | bigint>, (value) => this.checkRange(name, value));
    }

    private missing(name: string, required: boolean): undefined {
        if (required)
            throw new GgufValidationError(
                "missing-hparam", `this ${quoteFileText(this.arch)} model has no ${this.label(name)} entry, which llama.cpp needs to load it`
            );
        return undefined;
    }

    private checkRange(name: string, value: number | bigint): number {
        if (value < 0 || value > maxUint32)
            throw new GgufValidationError("bad-hparam", `${this.label(name)} is ${value}, outside the range 0 to ${maxUint32} llama.cpp can hold`);
        return Number(value);
    }
}

function describeType(entry: GgufMetadataValue): string {
    return entry.type === "array" ? `an array of ${entry.elementType}` : `a ${entry.type}`;
}
