/**
 * The committed flag table (llamaArgTable.ts) is what scripts/generateLlamaArgTable.mjs makes of the llama.cpp source
 * the shipped binaries were built from (build/native/llama.cpp, extracted by the native install). Without that source
 * the comparison is skipped, saying why.
 */
import {existsSync} from "node:fs";
import {readFile} from "node:fs/promises";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {describe, expect, it} from "vitest";
import {LLAMA_ARGS, LLAMA_BENCH_ARGS} from "./llamaArgTable.js";

type GeneratorScript = {DEFAULT_LLAMA_CPP_DIR: string; TABLE_FILE: string; generateLlamaArgTable(dir?: string): Promise<string>};

const root = path.resolve(import.meta.dirname, "../../..");
const script = await import(pathToFileURL(path.join(root, "scripts/generateLlamaArgTable.mjs")).href) as GeneratorScript;
const source = path.join(script.DEFAULT_LLAMA_CPP_DIR, "common/arg.cpp");
const missing = existsSync(source) ? null : `${path.relative(root, source)} is absent (the native install extracts it)`;
if (missing != null)
    console.warn(`[skip] llama.cpp flag table drift check: ${missing}`);

describe.skipIf(missing != null)("the committed llama.cpp flag table", () => {
    it("is what the generator makes of the bundled llama.cpp source", async () => {
        expect(await readFile(script.TABLE_FILE, "utf8"), "run node scripts/generateLlamaArgTable.mjs").toBe(await script.generateLlamaArgTable());
    });
});

describe("LLAMA_ARGS", () => {
    const find = (name: string) => LLAMA_ARGS.find((spec) => spec.names.includes(name) || spec.negated.includes(name));

    it("knows the flags' spellings, values, environment names and removed flags as common/arg.cpp declares them", () => {
        expect(find("--n-gpu-layers")).toMatchObject({names: ["-ngl", "--gpu-layers", "--n-gpu-layers"], kind: "string", env: "LLAMA_ARG_N_GPU_LAYERS"});
        expect(find("-nkvo")).toMatchObject({names: ["-kvo", "--kv-offload"], kind: "bool"});
        expect(find("-ctv")?.values).toEqual(expect.arrayContaining(["f16", "q8_0", "q4_0"]));
        expect(find("-sm")?.values).toEqual(["none", "layer", "row", "tensor"]);
        expect(find("-cmoe")?.kind).toBe("flag");
        expect(find("-ncmoe")?.kind).toBe("int");
        expect(find("--draft-max")?.removed).toMatch(/spec-draft-n-max/);
        // the server's own -np entry besides the common one (common_params_parser_init adds one or the other)
        expect(LLAMA_ARGS.filter((spec) => spec.names.includes("-np")).map((spec) => spec.examples)).toEqual([["server"], ["common"]]);
    });

    it("knows llama-bench's flags from its usage text", () => {
        expect(LLAMA_BENCH_ARGS.find((spec) => spec.names.includes("-nopo"))).toEqual({names: ["-nopo", "--no-op-offload"], valueHint: "<0|1>"});
        expect(LLAMA_BENCH_ARGS.find((spec) => spec.names.includes("--progress"))?.valueHint).toBeNull();
    });
});
