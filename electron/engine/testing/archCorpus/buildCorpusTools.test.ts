import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {defaultCorpusToolPaths, interpositionProblem, patchedFiles} from "./buildCorpusTools.js";
import {archOfFile} from "./generateArchModels.js";

describe("the corpus generator's build", () => {
    it("takes only the loader from the unpatched source, and refuses when a node-llama-cpp patch reaches further", () => {
        expect(interpositionProblem(new Map([["PR-22566.diff", ["src/llama-model-loader.cpp"]]]))).toBeNull();
        expect(interpositionProblem(new Map([["PR-22566.diff", ["src/llama-model-loader.cpp"]], ["other.diff", ["src/llama-model.cpp"]]])))
            .toMatch(/other\.diff changes src\/llama-model\.cpp .*--stock-generator/);
    });

    it("reads the patches node-llama-cpp ships: today one, touching the loader alone", () => {
        const {patchesDir} = defaultCorpusToolPaths("cpu");
        if (!fs.existsSync(patchesDir)) return; // no install: nothing to read
        const patches = patchedFiles(patchesDir);
        expect(patches.size).toBeGreaterThan(0);
        expect(interpositionProblem(patches)).toBeNull();
    });

    it("names architectures from the generator's file names, hyphens inside the name included", () => {
        expect(archOfFile("/x/deepseek2-moe.gguf")).toEqual({arch: "deepseek2", moe: true});
        expect(archOfFile("ernie4_5-moe-moe.gguf")).toEqual({arch: "ernie4_5-moe", moe: true});
        expect(archOfFile("hunyuan-dense-dense.gguf")).toEqual({arch: "hunyuan-dense", moe: false});
        expect(archOfFile("notes.txt")).toBeNull();
    });
});
