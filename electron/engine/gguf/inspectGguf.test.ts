import {mkdtemp, rm, writeFile} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {inspectGguf} from "./inspectGguf.js";
import type {InspectedModel} from "./inspectGguf.js";
import {isMatmulWeight} from "./tensorRole.js";
import {buildTinyGguf, kv, tinyLlama, tinyLlamaSpec} from "./testing/tinyGguf.js";
import {tinyModelSpec} from "./testing/tinyModelSpec.js";
import type {TinyGgufSpec} from "./testing/tinyGguf.js";
import {validateGgufFile} from "./validateGguf.js";

let dir: string;
let fileCount = 0;

async function inspect(spec: TinyGgufSpec): Promise<InspectedModel> {
    const path = join(dir, `model-${fileCount++}.gguf`);
    await writeFile(path, buildTinyGguf(spec).bytes);
    return inspectGguf(await validateGgufFile(path));
}

beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "inspect-gguf-"));
});

afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

describe("inspectGguf", () => {
    it("summarises the tiny llama", async () => {
        const model = await inspect(tinyLlamaSpec());
        const {embd, ff, vocab, layers} = tinyLlama;
        const perLayer = embd + embd * embd * 2 + embd * (embd / 2) * 2 + embd + embd * ff * 3;
        const q8Elements = layers * (embd * embd * 2 + embd * (embd / 2) * 2 + embd * ff * 3) + embd * vocab;

        expect(model).toMatchObject({
            ggufVersion: 3,
            architecture: "llama",
            name: "Tiny Llama",
            fileType: {id: 7, name: "Q8_0"},
            parameterCount: embd * vocab + layers * perLayer + embd + embd * vocab,
            layerCount: 2,
            contextLength: 256,
            embeddingLength: embd,
            feedForwardLength: ff,
            headCount: 4,
            headCountKv: 2,
            expertCount: null,
            expertUsedCount: null,
            vocabSize: vocab
        });
        expect(model.quantMix).toEqual([
            {type: "q8_0", tensorCount: layers * 7 + 1, elements: q8Elements, bytes: q8Elements / 32 * 34},
            {type: "f32", tensorCount: layers * 2 + 1, elements: embd * (layers * 2 + 1), bytes: embd * (layers * 2 + 1) * 4},
            {type: "f16", tensorCount: 1, elements: embd * vocab, bytes: embd * vocab * 2}
        ]);
        expect(model.tensorBytes).toBe(model.quantMix.reduce((total, entry) => total + entry.bytes, 0));
    });

    it("builds the tensor table with layers, roles, types, shapes and bytes", async () => {
        const model = await inspect(tinyLlamaSpec());
        expect(model.tensors).toHaveLength(21);
        expect(model.tensors[0]).toEqual({
            name: "token_embd.weight", layer: null, role: "token_embd", type: "f16", shape: [32, 6], elements: 192, bytes: 384
        });
        expect(model.tensors.find((tensor) => tensor.name === "blk.1.ffn_down.weight")).toEqual({
            name: "blk.1.ffn_down.weight", layer: 1, role: "ffn_down", type: "q8_0", shape: [64, 32], elements: 2048, bytes: 2176
        });
        expect(model.tensors.at(-1)).toMatchObject({name: "output.weight", layer: null, role: "output"});
        expect(model.tensors.filter((tensor) => tensor.layer === 0)).toHaveLength(9);
        expect(model.tensors.filter((tensor) => isMatmulWeight(tensor.role)).every((tensor) => tensor.type === "q8_0"))
            .toBe(true);
    });

    it("is JSON-serialisable without loss", async () => {
        const model = await inspect(tinyLlamaSpec());
        expect(JSON.parse(JSON.stringify(model))).toEqual(model);
    });

    it("reads MoE hyperparameters and per-layer head counts", async () => {
        const model = await inspect(tinyModelSpec({
            arch: "qwen3moe",
            experts: {count: 8, used: 2, ff: 16},
            hparams: {
                "attention.head_count": kv.i32s("qwen3moe.attention.head_count", [4, 8]),
                vocab_size: kv.u64("qwen3moe.vocab_size", 1000n)
            }
        }));
        expect(model).toMatchObject({
            architecture: "qwen3moe", name: "tiny qwen3moe", fileType: null, expertCount: 8, expertUsedCount: 2,
            headCount: [4, 8], headCountKv: 2, layerCount: 2, vocabSize: 6
        });
        expect(model.tensors.find((tensor) => tensor.name === "blk.0.ffn_up_exps.weight"))
            .toMatchObject({layer: 0, role: "ffn_up_exps", shape: [32, 16, 8], elements: 32 * 16 * 8});
    });
});
