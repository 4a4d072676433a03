/**
 * The GGUF models of a repository, one per quant: a file `…-Q4_K_M.gguf`, or the parts `…-00001-of-00003.gguf` of one
 * split model (llama.cpp's `llama_split_path` naming) as one entry. Picks the one a user named, case-insensitively.
 */
import {HubError} from "./HubError.js";
import type {RepoFile} from "./listRepoFiles.js";

/** One model of the repository. */
export type GgufQuant = {
    /** The quant as the file name says it (`Q4_K_M`, `IQ2_XXS`, `F16`), upper case; the file's stem where none is recognised. */
    readonly name: string;
    /** Its files in load order (one, or the parts of a split model, part 1 first). */
    readonly files: readonly RepoFile[];
    readonly bytes: number;
};

/** llama.cpp's split file names: `{prefix}-{part:05d}-of-{count:05d}.gguf` (source: llama_split_path in llama.cpp). */
const SPLIT_NAME = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;
/** The quant types llama.cpp's llama-quantize writes into file names (source: QUANT_OPTIONS in tools/quantize/quantize.cpp). */
const QUANT_NAME = /^(?:I?Q\d(?:_[A-Z0-9]+)*|TQ\d_\d|MXFP4(?:_MOE)?|BF16|F16|F32|FP16|FP32)$/i;

/** The GGUF models among `files`, largest quant last (by bytes); multimodal projectors (`mmproj*`) are left out. */
export function groupGgufQuants(files: readonly RepoFile[]): GgufQuant[] {
    const groups = new Map<string, RepoFile[]>();
    for (const file of files) {
        const base = file.path.split("/").at(-1)!;
        if (!base.toLowerCase().endsWith(".gguf") || base.toLowerCase().startsWith("mmproj")) continue;
        const split = SPLIT_NAME.exec(file.path);
        const key = split == null ? file.path : `${split[1]}\0${split[3]}`;
        groups.set(key, [...(groups.get(key) ?? []), file]);
    }
    const quants: GgufQuant[] = [];
    for (const [key, parts] of groups) {
        const sorted = [...parts].sort((a, b) => a.path.localeCompare(b.path));
        if (key.includes("\0")) {
            const count = Number(SPLIT_NAME.exec(sorted[0]!.path)![3]);
            const numbers = sorted.map((f) => Number(SPLIT_NAME.exec(f.path)![2]));
            if (count < 1 || numbers.length !== count || numbers.some((n, i) => n !== i + 1))
                continue; // an incomplete split model cannot be loaded
        }
        quants.push({name: quantName(sorted[0]!.path), files: sorted, bytes: sorted.reduce((sum, f) => sum + f.bytes, 0)});
    }
    return quants.sort((a, b) => a.bytes - b.bytes || a.name.localeCompare(b.name));
}

/** The quant named in a GGUF file name: its last `-`/`.`-separated part that is a llama.cpp quant type. */
export function quantName(filePath: string): string {
    const stem = filePath.split("/").at(-1)!.replace(SPLIT_NAME, "$1").replace(/\.gguf$/i, "");
    const parts = stem.split(/[-.]/);
    for (let i = parts.length - 1; i >= 0; i--)
        if (QUANT_NAME.test(parts[i]!)) return parts[i]!.toUpperCase();
    return stem;
}

/** The quant `wanted` names (case-insensitive), or the only one; otherwise a sentence listing what exists. */
export function pickQuant(quants: readonly GgufQuant[], wanted: string | null, repo: string): GgufQuant {
    const listing = (list: readonly GgufQuant[]): string => list.map((q) => `${q.name} (${q.files[0]!.path}${q.files.length > 1 ? ` +${q.files.length - 1} parts` : ""})`).join(", ");
    if (quants.length === 0)
        throw new HubError(`${repo} has no GGUF model files.`);
    if (wanted == null) {
        if (quants.length === 1) return quants[0]!;
        throw new HubError(`${repo} has ${quants.length} quants; name one as ${repo}:QUANT: ${listing(quants)}.`);
    }
    const matches = quants.filter((q) => q.name.toLowerCase() === wanted.toLowerCase());
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0)
        throw new HubError(`${repo} has no quant ${wanted}; it has: ${listing(quants)}.`);
    throw new HubError(`${repo} has ${matches.length} models named ${wanted}; name the file by its URL instead: ${listing(matches)}.`);
}
