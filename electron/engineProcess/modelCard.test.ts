import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../engine/writer/makeSyntheticModel.js";
import {inspectModelFile, moeSummary, toModelCard} from "./modelCard.js";

let dir = "";
beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tensorwise-card-"));
});
afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

describe("the model card", () => {
    it("says how many experts a MoE model has and how many each token uses", async () => {
        const path = join(dir, "moe.gguf");
        await makeSyntheticModel(path, {preset: "mixtral-mini", type: "q8_0", layers: 1});
        const card = toModelCard(path, await inspectModelFile(path));
        expect(card.experts).toEqual({count: 8, used: 2});
        expect(moeSummary(card.experts)).toBe("MoE: 8 experts, 2 active");
    });

    it("has no MoE line for a dense model", async () => {
        const path = join(dir, "dense.gguf");
        await makeSyntheticModel(path, {preset: "tiny"});
        const card = toModelCard(path, await inspectModelFile(path));
        expect(card.experts).toBeNull();
        expect(moeSummary(card.experts)).toBeNull();
    });
});
