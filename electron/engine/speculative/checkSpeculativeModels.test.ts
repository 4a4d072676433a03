import path from "node:path";
import {beforeAll, describe, expect, it} from "vitest";
import {inspectGguf, type InspectedModel} from "../gguf/inspectGguf.js";
import {validateGgufFile} from "../gguf/validateGguf.js";
import {makeTestModel, testModelDir} from "../testing/testModels.js";
import {makeSyntheticArchModel} from "../writer/syntheticArchModels.js";
import {checkDraftModel, checkMtpModel, checkSpeculativeRequest} from "./checkSpeculativeModels.js";
import type {SpeculativeRequest} from "../../contract/speculative.js";

// Real files from the project's writer, read as a load reads them (no native code).
const inspect = async (file: string): Promise<InspectedModel> => inspectGguf(await validateGgufFile(file));

describe("which draft a model can take", () => {
    let target: InspectedModel, sameFamily: InspectedModel, otherVocab: InspectedModel, larger: InspectedModel;
    beforeAll(async () => {
        const shape = {preset: "tiny", type: "f16", vocab: 2048} as const;
        target = await inspect(await makeTestModel("draftcheck-target", {...shape, layers: 4}));
        sameFamily = await inspect(await makeTestModel("draftcheck-small", {...shape, layers: 2, seed: 3}));
        otherVocab = await inspect(await makeTestModel("draftcheck-vocab", {...shape, layers: 2, vocab: 1024}));
        larger = await inspect(await makeTestModel("draftcheck-larger", {...shape, layers: 8}));
    }, 120_000);

    it("takes a smaller model of the same tokenizer, and the model's own size (the planner prices and declines that one)", () => {
        expect(() => checkDraftModel(target, sameFamily)).not.toThrow();
        expect(() => checkDraftModel(target, target)).not.toThrow();
    });

    it("refuses another vocabulary and a larger draft by name, before anything loads", () => {
        expect(() => checkDraftModel(target, otherVocab)).toThrow(/vocabulary is not the model's \(tokens: 1024 against 2048\)/);
        expect(() => checkDraftModel(target, larger)).toThrow(/larger than the model.*Use a smaller draft model/);
    });

    it("refuses a draft whose token texts differ though its counts match (a list of the right length)", () => {
        const forged = {...sameFamily, tokenizer: {...sameFamily.tokenizer!, tokensDigest: "0".repeat(64)}} as InspectedModel;
        expect(() => checkDraftModel(target, forged)).toThrow(/token texts/);
        const noTokens = {...sameFamily, tokenizer: {...sameFamily.tokenizer!, tokensDigest: null}} as InspectedModel;
        expect(() => checkDraftModel(target, noTokens)).toThrow(/no token list/);
    });

    it("refuses an MTP speculation on a model without an MTP block, and on one whose block llama.cpp's MTP graph would stop on", async () => {
        expect(() => checkMtpModel(target)).toThrow(/no multi-token-prediction layers/);
        const made = await makeSyntheticArchModel(path.join(testModelDir(), "draftcheck-deepseek2.gguf"), "deepseek2-mla");
        const deepseek = await inspect(made.path);
        // the writer's DeepSeek-2 has a nextn block with a dense FFN: llama_model_deepseek2::graph_mtp asserts expert weights
        expect(made.nextnLayers).toBe(1);
        expect(() => checkMtpModel(deepseek)).toThrow(/MTP block \(layer \d+\) lacks .*ffn_gate_inp.*would stop the whole program/);
    });
});

describe("a speculative request from outside, from the attacker's side", () => {
    const refuses = (request: unknown, pattern: RegExp): void => {
        expect(() => checkSpeculativeRequest(request as SpeculativeRequest), JSON.stringify(request)).toThrow(pattern);
    };

    it("takes each choice with what goes with it", () => {
        for (const request of [{choice: "auto"}, {choice: "off"}, {choice: "ngram", nMax: 64, ngramSizeN: 1, ngramSizeM: 64},
            {choice: "draft", draftPath: "/d.gguf", nMax: 1}, {choice: "auto", draftPath: "/d.gguf"}, {choice: "mtp", nMax: 3}] as SpeculativeRequest[])
            expect(() => checkSpeculativeRequest(request)).not.toThrow();
    });

    it("refuses unknown choices of every shape, and parts that do not go together, by name", () => {
        for (const choice of ["NGRAM", "", "lookup", null, 3, ["ngram"], {}, "auto "])
            refuses({choice}, /Unknown speculative decoding/);
        refuses({choice: "ngram", draftPath: "/d.gguf"}, /does not use one/);
        refuses({choice: "off", draftPath: "/d.gguf"}, /does not use one/);
        refuses({choice: "draft"}, /needs the draft model's file/);
        refuses({choice: "draft", draftPath: "/d.gguf", ngramSizeN: 3}, /n-gram sizes were given/);
        refuses({choice: "mtp", ngramSizeM: 8}, /n-gram sizes were given/);
    });

    it("refuses lengths out of bounds or not whole numbers, naming the flag", () => {
        for (const nMax of [0, -1, 65, 2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])
            refuses({choice: "ngram", nMax}, /--spec-draft-n-max/);
        for (const size of [0, 65, 1.5, -3])
            refuses({choice: "ngram", ngramSizeN: size}, /--spec-ngram-map-k-size-n/);
        refuses({choice: "ngram", ngramSizeM: 1e9}, /--spec-ngram-map-k-size-m/);
    });
});
