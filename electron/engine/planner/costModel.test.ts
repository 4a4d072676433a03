// Each cost-model term pinned to a value computed by hand from the formula it models (see costModel.ts).
import {describe, expect, it} from "vitest";
import {costContext, decodeHops, kvBytesPerLayer, predict} from "./costModel.js";
import {layerSplit, perTensor} from "./resolvePlacement.js";
import {handModel, handProfile, type HandOp, type HandShape} from "./testing/handModel.js";

const shape: HandShape = {layers: 2, embd: 64, heads: 4, kvHeads: 1};

describe("the cost model's terms, by hand", () => {
    it("KV cache: K and V, one F16 row of n_embd_k_gqa per cell (llama_kv_cache)", () => {
        // head dim 64/4 = 16, one KV head: 2 × 2048 cells × 16 × 1 × 2 bytes
        expect(kvBytesPerLayer(handModel(shape, []), 2048)).toBe(131_072);
    });

    it("attention: decode reads the K and V cells, prefill does 4·heads·headDim·tokens·keys flops", () => {
        // No weight ops: one step is attention alone. Reads 1000 B/µs, flops 32 000 /µs (handProfile's reference op).
        const model = handModel(shape, []);
        const profile = handProfile(model, [], {switchUs: 0, h2dBytesPerSec: 1e9});
        const cx = costContext({model, profile, gpuDevice: null}, {useMmap: true, batchSize: 512, contextSize: 2048, threads: 2},
            {promptTokens: 100, genTokens: 20});
        const p = predict(cx, layerSplit(model, 0));
        // decode at the mean position 100 + 20/2 = 110 keys: 2 × 110 × 16 × 1 × 2 B = 7040 B → 7.04 µs a layer, 2 layers
        expect(p.tpotMs).toBeCloseTo(0.01408, 9);
        // prefill, one micro-batch of 100 at mean key position 50: 4 × 4 × 16 × 100 × 50 = 1 280 000 flops → 40 µs a layer
        expect(p.ttftMs).toBeCloseTo(0.08, 9);
        // request = TTFT + 19 × TPOT
        expect(p.requestMs).toBeCloseTo(0.08 + 19 * 0.01408, 9);
    });

    describe("hops: every CPU↔GPU switch costs a sync, and in prefill a copy of the micro-batch's activations", () => {
        // Every op takes 5 µs a token on either device, so moving one changes only the switches around it.
        const ops: HandOp[] = (["attn_q", "ffn_up", "ffn_down"] as const).flatMap((role) => [0, 1].map((layer) => ({layer, role, bytes: 4096, cpuUs: 5, gpuUs: 5})));
        const model = handModel(shape, ops);
        // 30 µs a switch; H2D 1 GB/s = 1000 B/µs
        const profile = handProfile(model, ops, {switchUs: 30, h2dBytesPerSec: 1e9});
        const cx = costContext({model, profile, gpuDevice: "CUDA0"}, {useMmap: false, batchSize: 128, contextSize: 256, threads: 2},
            {promptTokens: 16, genTokens: 9});
        const allGpu = perTensor(model, new Set());
        const upOnHost = perTensor(model, new Set(["blk.0.ffn_up.weight"]));

        it("counts them in graph order: embeddings (CPU) → … → logits (CPU)", () => {
            // all on the GPU: CPU → q0 … down1 → CPU = 2; up0 on the host: q0, attn0 (GPU) → up0 (CPU) → down0 (GPU) adds 2
            expect(decodeHops(cx, allGpu)).toBe(2);
            expect(decodeHops(cx, upOnHost)).toBe(4);
        });

        it("prices each switch at switchUs a token and switchUs + activations/H2D a prompt micro-batch", () => {
            const a = predict(cx, allGpu);
            const b = predict(cx, upOnHost);
            // 2 more switches × 30 µs
            expect(b.tpotMs - a.tpotMs).toBeCloseTo(0.06, 9);
            // one 16-token micro-batch (< 32: ops run where they live): 2 × (30 + 16 × 64 × 4 B / 1000 B/µs) = 68.192 µs
            expect(b.ttftMs - a.ttftMs).toBeCloseTo(0.068192, 9);
            // and the absolute decode step: 6 ops × 5 µs + 2 switches × 30 µs + attention of 2 layers, each reading
            // 2 × 20.5 keys (16 + 9/2) × 16 × 1 × 2 B = 1312 B at 1000 B/µs
            expect(a.tpotMs).toBeCloseTo((6 * 5 + 2 * 30 + 2 * 1.312) / 1000, 9);
        });
    });
});
