/**
 * Writes the corpus: llama.cpp's own test-llama-archs (`-o DIR`) generates a small random-weight model of every
 * architecture it supports (two layers of F32/F16 weights, a 128-token "test" vocabulary, 256-token context; source:
 * tests/test-llama-archs.cpp get_gguf_ctx), and llama-quantize makes the quantized variants.
 */
import {spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** One generated model file. */
export type ArchModel = {arch: string; moe: boolean; path: string};

/** What the generator did. */
export type GeneratedCorpus = {
    models: ArchModel[];
    /** Architectures (and dense/MoE) the generator skips as unsupported, from its own log. */
    unsupported: string[];
    /** Set when the generator stopped early (its models so far are kept, the one it was writing is removed). */
    error: string | null;
};

/** `deepseek2-moe.gguf` → {arch "deepseek2", moe true}; `ernie4_5-moe-dense.gguf` → {arch "ernie4_5-moe", moe false}. */
export function archOfFile(file: string): {arch: string; moe: boolean} | null {
    const match = /^(.+)-(dense|moe)\.gguf$/.exec(path.basename(file));
    return match == null ? null : {arch: match[1]!, moe: match[2] === "moe"};
}

/**
 * Runs `generator` for the architectures matching `archRegex` (llama.cpp's `-a`: an exact name, or a regex searched in
 * the name; omitted: all) with `seed` into `outDir`, and lists what it wrote.
 */
export function generateArchModels(generator: string, outDir: string, options: {seed?: number; archRegex?: string; timeoutMs?: number} = {}): GeneratedCorpus {
    fs.mkdirSync(outDir, {recursive: true});
    const args = ["-s", String(options.seed ?? 42), "-o", outDir, ...(options.archRegex != null ? ["-a", options.archRegex] : [])];
    const run = spawnSync(generator, args, {encoding: "utf8", timeout: options.timeoutMs ?? 1_800_000, maxBuffer: 64 << 20});
    const log = `${run.stdout ?? ""}\n${run.stderr ?? ""}`;
    const unsupported = [...log.matchAll(/save_models: (\S+) model \((dense|MoE)\) is unsupported/g)].map((match) => `${match[1]} (${match[2]})`);
    let error: string | null = null;
    if (run.status !== 0) {
        const saving = [...log.matchAll(/Saving \S+ model \((?:dense|MoE)\) to (\S+)\.\.\./g)].pop()?.[1];
        if (saving != null) fs.rmSync(saving, {force: true});
        const how = run.error != null ? run.error.message : run.signal != null ? `killed by ${run.signal}` : `exit ${run.status}`;
        const last = log.split("\n").map((line) => line.trim()).filter((line) => line !== "").pop() ?? "";
        error = `test-llama-archs stopped (${how})${saving != null ? ` while writing ${path.basename(saving)}` : ""}: ${last.slice(0, 300)}`;
    }
    const models = fs.readdirSync(outDir).sort().flatMap((file) => {
        const arch = archOfFile(file);
        return arch == null ? [] : [{...arch, path: path.join(outDir, file)}];
    });
    return {models, unsupported, error};
}

/** llama-quantize's type names for the variants the corpus makes. */
export const QUANT_TYPES = {q8_0: "Q8_0", q4_k: "Q4_K_M", mxfp4: "MXFP4_MOE"} as const;
export type CorpusQuant = keyof typeof QUANT_TYPES;

/** Quantizes `source` into `outDir` as `<name>-<quant>.gguf` (kept when it exists); says why when llama-quantize fails. */
export function quantizeModel(quantize: string, source: string, quant: CorpusQuant, outDir: string,
    options: {timeoutMs?: number} = {}): {ok: true; path: string} | {ok: false; error: string} {
    fs.mkdirSync(outDir, {recursive: true});
    const target = path.join(outDir, `${path.basename(source, ".gguf")}-${quant}.gguf`);
    if (fs.existsSync(target)) return {ok: true, path: target};
    const tmp = `${target}.tmp-${process.pid}`;
    const run = spawnSync(quantize, [source, tmp, QUANT_TYPES[quant], "1"], {encoding: "utf8", timeout: options.timeoutMs ?? 600_000, maxBuffer: 64 << 20});
    if (run.status !== 0) {
        fs.rmSync(tmp, {force: true});
        const lines = `${run.stdout ?? ""}\n${run.stderr ?? ""}`.split("\n").map((line) => line.trim()).filter((line) => line !== "");
        const reason = lines.find((line) => /error|failed|exception/i.test(line)) ?? lines.pop() ?? "no output";
        const how = run.error != null ? run.error.message : run.signal != null ? `killed by ${run.signal}` : `exit ${run.status}`;
        return {ok: false, error: `llama-quantize ${QUANT_TYPES[quant]} failed (${how}): ${reason.slice(0, 300)}`};
    }
    fs.renameSync(tmp, target);
    return {ok: true, path: target};
}

/** SHA-256 of a file (the generator check compares the two generators' files). */
export function fileSha256(file: string): string {
    return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}
