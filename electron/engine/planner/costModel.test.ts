// Each cost-model term pinned to a value computed by hand from the formula it models (see costModel.ts).
import {describe, expect, it} from "vitest";
import type {ResolvedSettings} from "../../contract/settings.js";
import type {MemoryLayout} from "../gguf/llamaMemoryLayout.js";
import {attentionUs, costContext, decodeHops, decodeOpUs, kvBytesOfLayer, predict, prefillOpUs, requestLowerBoundMs, scratchBytes, scratchFor, scratchKey,
    vramNeed} from "./costModel.js";
import {expectedDistinctExperts} from "./expectedDistinctExperts.js";
import {layerSplit, perTensor, tiedOutputOverrides} from "./resolvePlacement.js";
import {fakeModel, fakeProfile} from "./testing/fakeProfile.js";
import {handModel, handProfile, handSettings, type HandOp, type HandShape} from "./testing/handModel.js";
import type {PlannerModel, PlannerTensor} from "./types.js";

const shape: HandShape = {layers: 2, embd: 64, heads: 4, kvHeads: 1};

describe("the cost model's terms, by hand", () => {
    it("KV cache: K and V, one F16 row of n_embd_k_gqa per cell (llama_kv_cache)", () => {
        // head dim 64/4 = 16, one KV head: 2 × 2048 cells × 16 × 1 × 2 bytes
        const settings = {contextSize: 2048, batchSize: 512, kvCacheType: "f16", flashAttention: false} as const;
        expect(kvBytesOfLayer(handModel(shape, []), 0, settings)).toBe(131_072);
        // llama.cpp pads the context to 256 cells (llama_context ctor): 2000 tokens take 2048 cells
        expect(kvBytesOfLayer(handModel(shape, []), 1, {...settings, contextSize: 2000})).toBe(131_072);
    });

    it("host memory: the KV cache of every layer whose attention runs on the CPU, and the scratch only when the CPU runs the whole graph", () => {
        const model = {...handModel({...shape, layers: 4}, []), vocabSize: 1000};
        const profile = handProfile(model, [], {switchUs: 0, h2dBytesPerSec: 1e9});
        const settings = handSettings({useMmap: true, batchSize: 512, contextSize: 2048, threads: 2});
        const workload = {promptTokens: 100, genTokens: 20};
        const perLayer = kvBytesOfLayer(model, 0, settings);
        const cpuOnly = predict(costContext({model, profile, gpuDevice: null}, settings, workload), layerSplit(model, 0));
        expect(cpuOnly.hostKvBytes).toBe(4 * perLayer);
        expect(cpuOnly.vram.kv).toBe(0);
        expect(cpuOnly.hostScratchBytes).toBe(scratchFor({model, profile, gpuDevice: null}, settings, 0));
        expect(cpuOnly.hostScratchBytes).toBeGreaterThan(0);
        // -ngl 3 (the output layer and the last 2 repeating layers): 2 layers' KV stay on the host; with a GPU in the
        // graph the host's scratch is not priced
        const mixed = predict(costContext({model, profile, gpuDevice: "CUDA0"}, settings, workload), layerSplit(model, 3));
        expect(mixed.hostKvBytes).toBe(2 * perLayer);
        expect(mixed.vram.kv).toBe(2 * perLayer);
        expect(mixed.hostScratchBytes).toBeNull();
    });

    it("attention: decode reads the K and V cells, prefill does 4·heads·headDim·tokens·keys flops", () => {
        // No weight ops: one step is attention alone. Reads 1000 B/µs, flops 32 000 /µs (handProfile's reference op).
        const model = handModel(shape, []);
        const profile = handProfile(model, [], {switchUs: 0, h2dBytesPerSec: 1e9});
        const cx = costContext({model, profile, gpuDevice: null}, handSettings({useMmap: true, batchSize: 512, contextSize: 2048, threads: 2}),
            {promptTokens: 100, genTokens: 20});
        const p = predict(cx, layerSplit(model, 0));
        // without flash attention KQ spans the cache's view, the used cells padded to 256 (llama_kv_cache::get_n_kv):
        // decode at the mean position 100 + 20/2 = 110 reads 256 cells: 2 × 256 × 16 × 1 × 2 B = 16 384 B → 16.384 µs a
        // layer, 2 layers
        expect(p.tpotMs).toBeCloseTo(0.032768, 9);
        // prefill, one micro-batch of 100 over 256 cells: 4 × 4 × 16 × 100 × 256 = 6 553 600 flops → 204.8 µs a layer
        expect(p.ttftMs).toBeCloseTo(0.4096, 9);
        // request = TTFT + 19 × TPOT
        expect(p.requestMs).toBeCloseTo(0.4096 + 19 * 0.032768, 9);
        // flash attention skips masked keys: the causal prompt's average visible keys (50.5) and the 111 cells of decode
        const flash = predict(costContext({model, profile, gpuDevice: null}, handSettings({useMmap: true, batchSize: 512, contextSize: 2048, threads: 2,
            flashAttention: true}), {promptTokens: 100, genTokens: 20}), layerSplit(model, 0));
        expect(flash.tpotMs).toBeCloseTo(2 * 2 * 111 * 16 * 2 / 1000 / 1000, 9);
        expect(flash.ttftMs).toBeCloseTo(2 * 4 * 4 * 16 * 100 * 50.5 / 32_000 / 1000, 9);
    });

    it("decode: each op at its own batch-1 time, however fast another op of the same ggml type ran", () => {
        // Two F16 ops of 4096 B: one read at 4096 B/µs (a weight the cache held), one at 409.6 B/µs (from memory).
        const ops: HandOp[] = [{layer: 0, role: "attn_q", bytes: 4096, cpuUs: 1, gpuUs: 1}, {layer: 1, role: "attn_q", bytes: 4096, cpuUs: 10, gpuUs: 10}];
        const typed = handModel(shape, ops);
        const model = {...typed, tensors: typed.tensors.map((t) => t.op == null ? t : {...t, type: "f16", op: {...t.op, type: "f16"}})};
        const profile = handProfile(typed, ops, {switchUs: 0, h2dBytesPerSec: 1e9});
        const f16 = {...profile, matmuls: profile.matmuls.map((m) => ({...m, type: "f16"}))};
        const settings = handSettings({useMmap: true, batchSize: 512, contextSize: 2048, threads: 2});
        const workload = {promptTokens: 100, genTokens: 20};
        const shared = predict(costContext({model, profile: f16, gpuDevice: null}, settings, workload), layerSplit(model, 0));
        const own = predict(costContext({model: typed, profile, gpuDevice: null}, settings, workload), layerSplit(typed, 0));
        // the same 1 + 10 µs as with a type per op: the slower op is not bounded by the faster one's bytes/µs
        expect(shared.tpotMs).toBeCloseTo(own.tpotMs, 12);
        expect(own.tpotMs).toBeGreaterThan(0.011);
    });

    it("per-decode costs: a fixed one per llama_decode and one per layer, read from the profile's calibration", () => {
        const model = handModel(shape, []);
        const profile = handProfile(model, [], {switchUs: 0, h2dBytesPerSec: 1e9});
        const settings = handSettings({useMmap: true, batchSize: 64, contextSize: 2048, threads: 2});
        const workload = {promptTokens: 100, genTokens: 20};
        const plain = predict(costContext({model, profile, gpuDevice: null}, settings, workload), layerSplit(model, 0));
        const calibrated = {...profile, decodeOverheadUs: 100, decodePerLayerUs: 7};
        const p = predict(costContext({model, profile: calibrated, gpuDevice: null}, settings, workload), layerSplit(model, 0));
        // 100 + 2 layers × 7 µs a token; the prompt is two micro-batches (64 + 36), two llama_decode graphs
        expect(p.tpotMs - plain.tpotMs).toBeCloseTo(0.114, 9);
        expect(p.ttftMs - plain.ttftMs).toBeCloseTo(0.228, 9);
        // an explicit input wins over the profile's
        const explicit = predict(costContext({model, profile: calibrated, gpuDevice: null, decodeOverheadUs: 0, decodePerLayerUs: 0}, settings, workload), layerSplit(model, 0));
        expect(explicit.tpotMs).toBeCloseTo(plain.tpotMs, 12);
    });

    describe("hops: every CPU↔GPU switch costs a sync, and in prefill a copy of the micro-batch's activations", () => {
        // Every op takes 5 µs a token on either device, so moving one changes only the switches around it.
        const ops: HandOp[] = (["attn_q", "ffn_up", "ffn_down"] as const).flatMap((role) => [0, 1].map((layer) => ({layer, role, bytes: 4096, cpuUs: 5, gpuUs: 5})));
        const model = handModel(shape, ops);
        // 30 µs a switch; H2D 1 GB/s = 1000 B/µs
        const profile = handProfile(model, ops, {switchUs: 30, h2dBytesPerSec: 1e9});
        const cx = costContext({model, profile, gpuDevice: "CUDA0"}, handSettings({useMmap: false, batchSize: 128, contextSize: 256, threads: 2}),
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
            // and the absolute decode step: 6 ops × 5 µs + 2 switches × 30 µs + attention of 2 layers, each reading the
            // 256 cells of the cache's view (20 used, padded to 256): 2 × 256 × 16 × 1 × 2 B = 16 384 B at 1000 B/µs
            expect(a.tpotMs).toBeCloseTo((6 * 5 + 2 * 30 + 2 * 16.384) / 1000, 9);
        });
    });
});

describe("the configuration knobs, by hand", () => {
    // one host-resident weight op: 5 µs a token on the CPU, 1 µs on the GPU, 4096 bytes; H2D 1000 B/µs, no switch cost
    const ops: HandOp[] = [{layer: 0, role: "ffn_up", bytes: 4096, cpuUs: 5, gpuUs: 1}];
    const model = handModel({layers: 2, embd: 64, heads: 4, kvHeads: 1}, ops);
    const profile = handProfile(model, ops, {switchUs: 0, h2dBytesPerSec: 1e9});
    const up = model.tensors.find((t) => t.role === "ffn_up")!;
    const workload = {promptTokens: 64, genTokens: 4};
    const at = (knobs: Partial<ResolvedSettings>) =>
        costContext({model, profile, gpuDevice: "CUDA0"}, handSettings({useMmap: false, batchSize: 64, contextSize: 256, threads: 2, ...knobs}), workload);

    it("op offload: a 64-token micro-batch runs a host weight on the GPU after copying it in, unless op offload is off", () => {
        // on: 64 tokens × 1 µs on the GPU + 4096 B / 1000 B/µs; off (--no-op-offload): 64 × 5 µs where it lives
        expect(prefillOpUs(at({}), up, false)).toBeCloseTo(64 + 4.096, 9);
        expect(prefillOpUs(at({opOffload: false}), up, false)).toBeCloseTo(320, 9);
        // a 16-token micro-batch is below the offload threshold: where it lives either way
        expect(prefillOpUs(at({batchSize: 16}), up, false)).toBeCloseTo(4 * 16 * 5, 9);
    });

    it("GPU use: without the GPU nothing is offloaded, nothing is on it, and no switch is made", () => {
        const cx = at({useGpu: false});
        expect(cx.gpuDevice).toBeNull();
        expect(prefillOpUs(cx, up, false)).toBeCloseTo(320, 9);
        const p = predict(cx, layerSplit(model, 0));
        expect(p.vram.total).toBe(0);
        expect(p.decodeHops).toBe(0);
        // even a placement that names GPU tensors is priced as the CPU runs it
        expect(predict(cx, perTensor(model, new Set())).vram.total).toBe(0);
    });

    it("the op-offload compute buffer of a CPU-only placement is reserved only with op offload on and micro-batches ≥ 32", () => {
        const cpuOnly = layerSplit(model, 0);
        expect(vramNeed(at({}), cpuOnly).scratch).toBeGreaterThan(0);
        expect(vramNeed(at({opOffload: false}), cpuOnly).total).toBe(0);
        expect(vramNeed(at({batchSize: 16}), cpuOnly).total).toBe(0);
    });

    it("KV offload off: every layer's KV cache in host memory and its attention on the CPU, with the switches around it", () => {
        // a Q projection before each layer's attention and an FFN weight after it
        const layered: HandOp[] = [0, 1].flatMap((layer) => [{layer, role: "attn_q", bytes: 4096, cpuUs: 5, gpuUs: 1} as const,
            {layer, role: "ffn_up", bytes: 4096, cpuUs: 5, gpuUs: 1} as const]);
        const twoLayers = handModel({layers: 2, embd: 64, heads: 4, kvHeads: 1}, layered);
        const cx = (knobs: Partial<ResolvedSettings>) => costContext({model: twoLayers, profile: handProfile(twoLayers, layered, {switchUs: 0, h2dBytesPerSec: 1e9}),
            gpuDevice: "CUDA0"}, handSettings({useMmap: false, batchSize: 64, contextSize: 256, threads: 2, ...knobs}), workload);
        const allGpu = perTensor(twoLayers, new Set());
        const on = predict(cx({}), allGpu);
        const off = predict(cx({kvOffload: false}), allGpu);
        const perLayer = kvBytesOfLayer(model, 0, {contextSize: 256, batchSize: 64, kvCacheType: "f16", flashAttention: false});
        expect(on.vram.kv).toBe(2 * perLayer);
        expect(off.vram.kv).toBe(0);
        expect(off.hostKvBytes).toBe(2 * perLayer);
        // GPU → attention (CPU) → GPU in each of the 2 layers, on top of the 2 in and out of the graph
        expect(on.decodeHops).toBe(2);
        expect(off.decodeHops).toBe(6);
    });

    it("KV cache type: K and V in 34-byte blocks of 32 for q8_0 and 18-byte blocks for q4_0, read by decode attention in proportion", () => {
        // 2 × 256 cells × 16 × 1 elements
        const kv = {contextSize: 256, batchSize: 64, flashAttention: true} as const;
        expect(kvBytesOfLayer(model, 0, {...kv, kvCacheType: "f16"})).toBe(2 * 256 * 16 * 2);
        expect(kvBytesOfLayer(model, 0, {...kv, kvCacheType: "q8_0"})).toBe(2 * 256 * 16 * 34 / 32);
        expect(kvBytesOfLayer(model, 0, {...kv, kvCacheType: "q4_0"})).toBe(2 * 256 * 16 * 18 / 32);
        const f16 = attentionUs(at({}), false, 1, 100, 0);
        expect(attentionUs(at({kvCacheType: "q8_0", flashAttention: true}), false, 1, 100, 0)).toBeCloseTo(f16 * 17 / 32, 12);
    });

    it("the scratch measurement is looked up per configuration: flash attention and op offload change the compute buffer", () => {
        const settings = handSettings({useMmap: false, batchSize: 64, contextSize: 256, threads: 2});
        const flash = {...settings, flashAttention: true};
        const inputs = {model, profile, gpuDevice: "CUDA0", scratchContextSize: 256,
            scratchByKey: new Map([[scratchKey(settings), 3000], [scratchKey(flash), 1000]])};
        expect(scratchFor(inputs, settings, 0)).toBe(3000);
        expect(scratchFor(inputs, flash, 0)).toBe(1000);
        // the formula for an unmeasured configuration: no KQ matrix with flash attention, no weight copy without op offload
        expect(scratchBytes(model, {...flash, opOffload: false}, 4096)).toBe(scratchBytes(model, {...settings, opOffload: false}, 4096) - 4 * 64 * 256 * 4);
        expect(scratchBytes(model, settings, 4096) - scratchBytes(model, {...settings, opOffload: false}, 4096)).toBe(4096);
    });

    it("flash attention and the KV cache type are priced from the profile's attention timings, scaled to the request", () => {
        // one layer's attention measured on the CPU: decode 100 µs at 512 keys and 400 at 2048 (linear in the keys), a
        // 64-token micro-batch over 512 keys 3000 µs (so 64 × 1024 token-keys cost 6000 µs); flash attention faster at prefill
        const point = (flash: boolean, tokens: number, keys: number, us: number) =>
            ({device: "CPU", flash, kvType: "f16", tokens, keys, supported: true, medianUs: us, minUs: us, samples: 3});
        const timed = {...profile, attentions: [point(false, 1, 512, 100), point(false, 1, 2048, 400), point(false, 64, 512, 3000),
            point(true, 1, 512, 150), point(true, 1, 2048, 600), point(true, 64, 512, 2000)]};
        const cx = (flashAttention: boolean) => costContext({model, profile: timed, gpuDevice: null}, handSettings({useMmap: true, batchSize: 64, contextSize: 4096,
            threads: 2, flashAttention}), workload);
        expect(attentionUs(cx(false), false, 1, 1024, 0)).toBeCloseTo(200, 9);
        expect(attentionUs(cx(true), false, 1, 1024, 0)).toBeCloseTo(300, 9);
        expect(attentionUs(cx(false), false, 64, 1024, 0)).toBeCloseTo(6000, 9);
        expect(attentionUs(cx(true), false, 64, 1024, 0)).toBeCloseTo(4000, 9);
        // a cache type the profile did not time falls back to the formula (reads of the quantized cells)
        const q8 = costContext({model, profile: timed, gpuDevice: null}, handSettings({useMmap: true, batchSize: 64, contextSize: 4096, threads: 2,
            flashAttention: true, kvCacheType: "q8_0"}), workload);
        expect(attentionUs(q8, false, 1, 1024, 0)).toBeCloseTo(2 * 1024 * 16 * 34 / 32 / q8.cpuReadBytesPerUs, 9);
    });

    it("flash attention the GPU has no kernel for runs on the CPU, with K and V copied there", () => {
        const unsupported = {device: "CUDA0", flash: true, kvType: "f16", tokens: 1, keys: 512, supported: false, medianUs: -1, minUs: -1, samples: 0};
        const cpu = {device: "CPU", flash: true, kvType: "f16", tokens: 1, keys: 512, supported: true, medianUs: 150, minUs: 150, samples: 3};
        const timed = {...profile, attentions: [unsupported, cpu]};
        const cx = costContext({model, profile: timed, gpuDevice: "CUDA0"}, handSettings({useMmap: false, batchSize: 64, contextSize: 4096, threads: 2,
            flashAttention: true}), workload);
        // 150 µs on the CPU + 2 × 512 × 16 × 2 bytes of K and V at 1000 B/µs (+ two switches of 0 µs)
        expect(attentionUs(cx, true, 1, 512, 0)).toBeCloseTo(150 + 32.768, 9);
    });

    it("the optimiser's lower bound is never above the prediction of any placement", () => {
        for (const knobs of [{}, {opOffload: false}, {kvOffload: false}, {batchSize: 16}, {useGpu: false}] as const) {
            const cx = at(knobs);
            const bound = requestLowerBoundMs(cx);
            for (const placement of [layerSplit(model, 0), layerSplit(model, 2), perTensor(model, new Set()), perTensor(model, new Set([up.name]))])
                expect(bound, JSON.stringify(knobs)).toBeLessThanOrEqual(predict(cx, placement).requestMs + 1e-12);
        }
    });
});

describe("a profile the time limit cut before the GPU's prefill sizes", () => {
    it("still predicts a finite TTFT, pricing GPU attention at the GPU's single-token rate", () => {
        const ops: HandOp[] = [{layer: 0, role: "attn_q", bytes: 4096, cpuUs: 5, gpuUs: 1}];
        const model = handModel({layers: 1, embd: 64, heads: 4, kvHeads: 1}, ops);
        const full = handProfile(model, ops, {switchUs: 0, h2dBytesPerSec: 1e9});
        const cut = {...full, matmuls: full.matmuls.filter((p) => p.device === "CPU" || p.batch === 1), truncated: true};
        const cx = costContext({model, profile: cut, gpuDevice: "CUDA0"}, handSettings({useMmap: false, batchSize: 64, contextSize: 256, threads: 2}),
            {promptTokens: 64, genTokens: 4});
        const p = predict(cx, perTensor(model, new Set()));
        expect(Number.isFinite(p.ttftMs) && p.ttftMs > 0).toBe(true);
    });
});

describe("mixture-of-experts terms, by hand", () => {
    it("a micro-batch of b tokens touches N·(1 − (1 − k/N)^b) distinct experts on average (uniform routing)", () => {
        expect(expectedDistinctExperts(8, 2, 1)).toBe(2);
        // 8 · (1 − 0.75²) = 8 · 0.4375
        expect(expectedDistinctExperts(8, 2, 2)).toBeCloseTo(3.5, 12);
        // Qwen3-30B-A3B: 128 experts, 8 used; one token: 8; a 32-token micro-batch: 128 · (1 − (120/128)^32) ≈ 111.77
        expect(expectedDistinctExperts(128, 8, 1)).toBeCloseTo(8, 12);
        expect(expectedDistinctExperts(128, 8, 32)).toBeCloseTo(111.771035, 5);
        // a 512-token micro-batch touches all of them
        expect(expectedDistinctExperts(128, 8, 512)).toBeCloseTo(128, 9);
        expect(expectedDistinctExperts(4, 4, 3)).toBe(4);
    });

    // One layer: the router (a dense matmul) and one expert weight of 64 experts, 2 used per token, 1 KiB each.
    // Times are per expert and token: 3 µs on the CPU, 1 µs on the GPU. No switch cost; H2D 1000 B/µs.
    const shape: HandShape = {layers: 1, embd: 64, heads: 4, kvHeads: 1};
    const ops: HandOp[] = [
        {layer: 0, role: "ffn_gate_inp", bytes: 512, cpuUs: 1, gpuUs: 1},
        {layer: 0, role: "ffn_up_exps", bytes: 64 * 1024, cpuUs: 3, gpuUs: 1, experts: {count: 64, used: 2}}
    ];
    const model = handModel(shape, ops);
    const profile = handProfile(model, ops, {switchUs: 0, h2dBytesPerSec: 1e9});
    const settings = handSettings({useMmap: false, batchSize: 512, contextSize: 1024, threads: 2});
    const workload = {promptTokens: 32, genTokens: 9};
    const allGpu = perTensor(model, new Set());
    const expertsOnHost = perTensor(model, new Set(["blk.0.ffn_up_exps.weight"]));
    const expertTensor = model.tensors.find((t) => t.experts != null)!;
    const router = model.tensors.find((t) => t.role === "ffn_gate_inp")!;

    it("decode reads the k = 2 selected experts of 64 (k/N of the tensor), the router whole as a dense op", () => {
        const cx = costContext({model, profile, gpuDevice: "CUDA0"}, settings, workload);
        // ggml_mul_mat_id for one token: 2 experts × 3 µs on the CPU, × 1 µs on the GPU
        expect(decodeOpUs(cx, expertTensor, false)).toBeCloseTo(6, 12);
        expect(decodeOpUs(cx, expertTensor, true)).toBeCloseTo(2, 12);
        expect(decodeOpUs(cx, router, false)).toBeCloseTo(1, 12);
        // the same number of switches either way (CPU → GPU … → CPU), so TPOT differs by 6 − 2 µs
        expect(predict(cx, expertsOnHost).tpotMs - predict(cx, allGpu).tpotMs).toBeCloseTo(0.004, 12);
    });

    it("prefill ≥ the offload threshold runs host experts on the GPU, copying only the experts the micro-batch uses", () => {
        const cx = costContext({model, profile, gpuDevice: "CUDA0"}, settings, workload);
        // one 32-token micro-batch (≥ 32): both placements compute on the GPU (2 × 32 token-experts × 1 µs = 64 µs);
        // the host one first copies 64 · (1 − (31/32)^32) = 40.828 of the 64 experts: 40.828 × 1024 B / 1000 B/µs
        const copyUs = 40.82846148759574 * 1024 / 1000;
        expect(predict(cx, expertsOnHost).ttftMs - predict(cx, allGpu).ttftMs).toBeCloseTo(copyUs / 1000, 9);
        expect(copyUs).toBeCloseTo(41.808, 3);
    });

    it("below the threshold (GGML_OP_OFFLOAD_MIN_BATCH = 64 here) host experts run on the CPU, nothing is copied", () => {
        const cx = costContext({model, profile, gpuDevice: "CUDA0", offloadMinBatch: 64}, settings, workload);
        // 32 tokens × 2 experts × (3 − 1) µs; the switches are the same in both placements
        expect(predict(cx, expertsOnHost).ttftMs - predict(cx, allGpu).ttftMs).toBeCloseTo(0.128, 9);
    });

    describe("with the profiler's MUL_MAT_ID and expert-copy timings, these replace the dense approximations", () => {
        const op = {...expertTensor.op!, count: 64, used: 2};
        // measured: one token's 2 experts take 5 µs on the CPU (not 2 × 3) and 1.5 µs on the GPU (not 2 × 1); a 32-token
        // micro-batch (41 distinct experts) 40 µs on the GPU (not 64); copying its 41 experts from pinned memory 30 µs
        const measured = {
            ...profile,
            expertMatmuls: [
                {...op, device: "CPU", batch: 1, distinct: 2, supported: true, medianUs: 5, minUs: 5, samples: 5},
                {...op, device: "CUDA0", batch: 1, distinct: 2, supported: true, medianUs: 1.5, minUs: 1.5, samples: 5},
                {...op, device: "CUDA0", batch: 32, distinct: 41, supported: true, medianUs: 40, minUs: 40, samples: 5}
            ],
            expertCopies: [{...op, device: "CUDA0", batch: 32, distinct: 41, bytes: 41 * 1024, medianUs: 30}]
        };

        it("decode: the measured MUL_MAT_ID of one token", () => {
            const cx = costContext({model, profile: measured, gpuDevice: "CUDA0"}, settings, workload);
            expect(decodeOpUs(cx, expertTensor, false)).toBeCloseTo(5, 12);
            expect(decodeOpUs(cx, expertTensor, true)).toBeCloseTo(1.5, 12);
            expect(predict(cx, expertsOnHost).tpotMs - predict(cx, allGpu).tpotMs).toBeCloseTo(0.0035, 12);
        });

        it("prefill: the measured copy of the used experts, interpolated to the expected 40.828 of them (30 µs per 41)", () => {
            const cx = costContext({model, profile: measured, gpuDevice: "CUDA0"}, settings, workload);
            // both placements compute the 32-token MUL_MAT_ID on the GPU (40 µs measured); the host one adds the copy
            const copyUs = 30 * 40.82846148759574 / 41;
            expect(predict(cx, expertsOnHost).ttftMs - predict(cx, allGpu).ttftMs).toBeCloseTo(copyUs / 1000, 9);
            // pageable memory (mmap on) at half the pinned bandwidth: the measured pinned copy takes twice as long
            const halfPageable = {...measured, transfers: measured.transfers.map((t) => ({...t, pageableH2dBytesPerSec: t.pinnedH2dBytesPerSec / 2}))};
            const mmap = costContext({model, profile: halfPageable, gpuDevice: "CUDA0"}, {...settings, useMmap: true}, workload);
            expect(predict(mmap, expertsOnHost).ttftMs - predict(mmap, allGpu).ttftMs).toBeCloseTo(2 * copyUs / 1000, 9);
        });

        it("an expert shape the profile did not time falls back to dense matmuls of one expert", () => {
            const other = {...measured, expertMatmuls: measured.expertMatmuls.map((p) => ({...p, count: 32}))};
            const cx = costContext({model, profile: other, gpuDevice: "CUDA0"}, settings, workload);
            expect(decodeOpUs(cx, expertTensor, false)).toBeCloseTo(6, 12);
        });
    });
});

describe("the memory of tied outputs, MLA, sliding windows and recurrent layers, by hand", () => {
    const settings = handSettings({useMmap: false, batchSize: 512, contextSize: 2048, threads: 2});
    const workload = {promptTokens: 100, genTokens: 20};

    it("a tied output: GPU bytes with the output layer, host bytes only where the CPU's extra buffer type takes the matmul", () => {
        const base = fakeModel(2, 64, 128, "f16", 1000, 4, 4);
        const embd = base.tensors.find((t) => t.role === "token_embd")!;
        const tied: PlannerTensor = {...embd, name: "output.weight", role: "output", op: {type: "f16", rows: 1000, cols: 64}, tiedTo: embd.name};
        const model: PlannerModel = {...base, tensors: [...base.tensors, tied]};
        const profile = fakeProfile(model);
        const cpuOnly = (p: typeof profile) => predict(costContext({model, profile: p, gpuDevice: null}, settings, workload), layerSplit(model, 0));
        expect(cpuOnly(profile).hostWeightBytes).toBe(base.weightBytes);
        const amx = {...profile, matmuls: profile.matmuls.map((m) => (m.device === "CPU" ? {...m, weightBufferType: "AMX"} : m))};
        expect(cpuOnly(amx).hostWeightBytes).toBe(base.weightBytes + tied.bytes);
        const all = predict(costContext({model, profile, gpuDevice: "CUDA0"}, settings, workload), layerSplit(model, 3));
        expect(all.vram.weights).toBe(base.weightBytes - embd.bytes + tied.bytes);
        expect(all.hostWeightBytes).toBe(embd.bytes);
        // left in host memory with the output layer on the GPU: one override of token_embd keeps both copies there
        const hostOutput = perTensor(model, new Set([tied.name]));
        expect(tiedOutputOverrides(model, hostOutput)).toEqual([{pattern: "^token_embd\\.weight$", bufferType: "CPU"}]);
        expect(tiedOutputOverrides(model, perTensor(model, new Set()))).toEqual([]);
        expect(tiedOutputOverrides(model, layerSplit(model, 0))).toEqual([]);
    });

    it("per-layer memory: MLA's latent row, a SWA layer's window + micro-batch, a recurrent layer's state; attention work to match", () => {
        const base = fakeModel(3, 64, 128, "f16", 1000, 4, 4);
        const memory: MemoryLayout = {
            layers: [
                // MLA: 4 query heads over one latent row of 96 (kv_lora 64 + rope 32), no V
                {attention: {heads: 4, kvHeads: 1, headK: 96, headV: 64, cellElements: 96, window: null}, kElements: 96, vElements: 0, windowed: false, recurrentElements: 0},
                // SWA: window 128, K and V of 64
                {attention: {heads: 4, kvHeads: 4, headK: 16, headV: 16, cellElements: 128, window: 128}, kElements: 64, vElements: 64, windowed: true, recurrentElements: 0},
                // recurrent: 1000 F32 elements of state
                {attention: null, kElements: 0, vElements: 0, windowed: false, recurrentElements: 1000}
            ],
            trunkLayers: 3, vElementsMax: 64, window: 128, swaBatchPad: true
        };
        const model: PlannerModel = {...base, memory};
        const kv = {contextSize: 2048, batchSize: 512, kvCacheType: "f16", flashAttention: false} as const;
        expect(kvBytesOfLayer(model, 0, kv)).toBe(2048 * 96 * 2);
        // 128 + 512 + 1 = 641 cells, padded to 768
        expect(kvBytesOfLayer(model, 1, kv)).toBe(768 * 128 * 2);
        expect(kvBytesOfLayer(model, 2, kv)).toBe(1000 * 4);
        const cx = costContext({model, profile: fakeProfile(model), gpuDevice: null}, settings, workload);
        const cpuReadBytesPerUs = cx.cpuReadBytesPerUs;
        // decode at 4000 keys: the MLA layer reads 4000 latent rows twice (K, then V as a view of their first 64),
        // the SWA layer only its 128 keys, the recurrent one reads and writes its state
        expect(attentionUs(cx, false, 1, 4000, 0)).toBeCloseTo(4000 * (96 + 64) * 2 / cpuReadBytesPerUs, 9);
        expect(attentionUs(cx, false, 1, 4000, 1)).toBeCloseTo(128 * 128 * 2 / cpuReadBytesPerUs, 9);
        expect(attentionUs(cx, false, 1, 4000, 2)).toBeCloseTo(2 * 1000 * 4 / cpuReadBytesPerUs, 9);
        // prefill: KQ + KQV over the visible keys, 2 flops per multiply-add
        expect(attentionUs(cx, false, 100, 50, 0)).toBeCloseTo(2 * 4 * (96 + 64) * 100 * 50 / cx.cpuFlopsPerUs, 9);
        expect(attentionUs(cx, false, 100, 500, 1)).toBeCloseTo(2 * 4 * 32 * 100 * 128 / cx.cpuFlopsPerUs, 9);
    });
});
