/**
 * The committed tensor table (llamaTensorTable.ts, llamaArchTensors.ts) is what scripts/generateLlamaTensorTable.mjs
 * makes of the llama.cpp source the shipped binaries were built from (build/native/llama.cpp, extracted by the native
 * install). Without that source the comparison is skipped, saying why.
 */
import {existsSync} from "node:fs";
import {readFile} from "node:fs/promises";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {describe, expect, it} from "vitest";
import {LLAMA_ARCH_TENSORS} from "./llamaArchTensors.js";
import {LLAMA_TENSORS} from "./llamaTensorTable.js";

type GeneratorScript = {
    DEFAULT_LLAMA_CPP_DIR: string;
    TABLE_FILE: string;
    ARCH_FILE: string;
    generateLlamaTensorTable(dir?: string): Promise<{table: string; archTensors: string}>;
};

const root = path.resolve(import.meta.dirname, "../../..");
const script = await import(pathToFileURL(path.join(root, "scripts/generateLlamaTensorTable.mjs")).href) as GeneratorScript;
const source = path.join(script.DEFAULT_LLAMA_CPP_DIR, "src/llama-arch.cpp");
const missing = existsSync(source) ? null : `${path.relative(root, source)} is absent (the native install extracts it)`;
if (missing != null)
    console.warn(`[skip] tensor table drift check: ${missing}`);

describe.skipIf(missing != null)("the committed llama.cpp tensor table", () => {
    it("is what the generator makes of the bundled llama.cpp source", async () => {
        const generated = await script.generateLlamaTensorTable();
        expect(await readFile(script.TABLE_FILE, "utf8"), "run node scripts/generateLlamaTensorTable.mjs").toBe(generated.table);
        expect(await readFile(script.ARCH_FILE, "utf8"), "run node scripts/generateLlamaTensorTable.mjs").toBe(generated.archTensors);
    });
});

describe("LLAMA_TENSORS", () => {
    it("has llama.cpp's names, layer classes and ops", () => {
        const byId = new Map(LLAMA_TENSORS.map((t) => [t.id, t]));
        expect(byId.get("ATTN_Q")).toEqual({id: "ATTN_Q", name: "blk.%d.attn_q", role: "attn_q", layer: "repeating", op: "MUL_MAT"});
        expect(byId.get("TOKEN_EMBD")).toMatchObject({layer: "input", op: "GET_ROWS"});
        expect(byId.get("FFN_UP_EXPS")).toMatchObject({op: "MUL_MAT_ID"});
        expect(byId.get("FFN_NORM_EXPS")).toMatchObject({name: "blk.%d.ffn_norm_exps", op: "MUL"});
        expect(byId.get("SSM_CONV1D")).toMatchObject({op: "SSM_CONV"});
        expect(byId.get("DEC_ATTN_Q")).toMatchObject({name: "dec.blk.%d.attn_q", role: "dec.attn_q"});
        expect(byId.get("FFN_UP_EXP")).toMatchObject({name: "blk.%d.ffn_up.%d", role: "ffn_up.%d"});
    });

    it("lists every tensor an architecture's loader creates", () => {
        const ids = new Set<string>(LLAMA_TENSORS.map((t) => t.id));
        expect(Object.keys(LLAMA_ARCH_TENSORS).length).toBeGreaterThan(100);
        for (const [arch, tensors] of Object.entries(LLAMA_ARCH_TENSORS))
            for (const [id] of tensors)
                expect(ids.has(id), `${arch}: ${id}`).toBe(true);
        expect(LLAMA_ARCH_TENSORS.arctic).toContainEqual(["FFN_NORM_EXPS", 1]);
        expect(LLAMA_ARCH_TENSORS.deepseek2).toContainEqual(["ATTN_K_B", 3]);
    });
});
