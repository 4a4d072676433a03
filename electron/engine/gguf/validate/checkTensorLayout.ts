import {GgufValidationError} from "../errors/GgufValidationError.js";
import type {ValidatedGgufTensor} from "../types/ValidatedGguf.js";
import {quoteFileText} from "./quoteFileText.js";

/** Rounds `value` up to a multiple of `alignment` (a power of two). */
export function alignUp(value: bigint, alignment: bigint): bigint {
    return ((value + alignment - 1n) / alignment) * alignment;
}

/**
 * Checks that tensor data is laid out as llama.cpp requires: each offset aligned, tensors packed in file order (each
 * starting where the previous one's data ends, rounded up to the alignment) and each tensor inside the file.
 * An offset that breaks the packing is `overlap`, `gap` or, when it points past the end, `out-of-bounds`;
 * a well-packed tensor whose data runs past the end means the file is `truncated`.
 *
 * source: `gguf_init_from_reader` ("tensor '%s' has offset %" PRIu64 ", expected %zu") in ggml/src/gguf.cpp and
 * `llama_model_loader` ("tensor data is not within the file bounds").
 */
export function checkTensorLayout(
    tensors: readonly ValidatedGgufTensor[],
    dataOffset: bigint,
    fileSize: bigint,
    alignment: bigint,
    offsetFieldPositions: readonly number[]
): void {
    let expected = 0n;
    tensors.forEach((tensor, i) => {
        const {name, offset, bytes} = tensor;
        const where = offsetFieldPositions[i];
        if (offset % alignment !== 0n)
            throw new GgufValidationError(
                "misaligned-offset",
                `tensor ${quoteFileText(name)} has data offset ${offset}, not a multiple of the alignment ${alignment}`,
                where
            );

        const start = dataOffset + offset;
        if (offset !== expected) {
            if (start >= fileSize)
                throw new GgufValidationError(
                    "out-of-bounds",
                    `tensor ${quoteFileText(name)} data would start at file byte ${start} but the file has ${fileSize} bytes`,
                    where
                );
            throw new GgufValidationError(
                offset < expected ? "overlap" : "gap",
                `tensor ${quoteFileText(name)} has data offset ${offset}; the tensors before it end at ${expected} ` +
                    `(tensor data must be packed in the order of the tensor infos, each padded to ${alignment} bytes)`,
                where
            );
        }

        const end = start + bytes;
        if (end > fileSize)
            throw new GgufValidationError(
                "truncated",
                `tensor ${quoteFileText(name)} data spans file bytes ${start}–${end} but the file ends at byte ${fileSize}`,
                where
            );
        expected = alignUp(offset + bytes, alignment);
    });
}
