/** Deterministic machine profiles and models for planner tests (no native code). */
import {parseTensorName} from "../../gguf/tensorRole.js";
import {expertOperatorOf, operatorOf} from "../../profiler/operatorShapes.js";
import {syntheticTensorSpecs, type SyntheticModelShape} from "../../writer/makeSyntheticModel.js";
import type {MachineProfile, MatmulPoint, OperatorShape} from "../../profiler/MachineProfile.js";
import {opBytes} from "../costModel.js";
import type {PlannerModel, PlannerTensor} from "../types.js";

const BYTES_PER_ELEMENT: Record<string, number> = {f16: 2, q8_0: 34 / 32, q4_0: 18 / 32, f32: 4};

/** A llama-shaped planner model with `layers` layers of the given type. */
export function fakeModel(layers = 8, embd = 512, ff = 1536, type = "f16", vocab = 4096, heads = 8, kvHeads = 2): PlannerModel {
    const bpe = BYTES_PER_ELEMENT[type] ?? 2;
    const kv = embd / heads * kvHeads;
    const tensors: PlannerTensor[] = [];
    const mat = (name: string, layer: number | null, role: string, rows: number, cols: number): void => {
        tensors.push({name, layer, role, type, bytes: Math.round(rows * cols * bpe), op: {type, rows, cols}});
    };
    tensors.push({name: "token_embd.weight", layer: null, role: "token_embd", type, bytes: Math.round(vocab * embd * bpe), op: null});
    for (let l = 0; l < layers; l++) {
        tensors.push({name: `blk.${l}.attn_norm.weight`, layer: l, role: "attn_norm", type: "f32", bytes: embd * 4, op: null});
        mat(`blk.${l}.attn_q.weight`, l, "attn_q", embd, embd);
        mat(`blk.${l}.attn_k.weight`, l, "attn_k", kv, embd);
        mat(`blk.${l}.attn_v.weight`, l, "attn_v", kv, embd);
        mat(`blk.${l}.attn_output.weight`, l, "attn_output", embd, embd);
        tensors.push({name: `blk.${l}.ffn_norm.weight`, layer: l, role: "ffn_norm", type: "f32", bytes: embd * 4, op: null});
        mat(`blk.${l}.ffn_gate.weight`, l, "ffn_gate", ff, embd);
        mat(`blk.${l}.ffn_up.weight`, l, "ffn_up", ff, embd);
        mat(`blk.${l}.ffn_down.weight`, l, "ffn_down", embd, ff);
    }
    tensors.push({name: "output_norm.weight", layer: null, role: "output_norm", type: "f32", bytes: embd * 4, op: null});
    mat("output.weight", null, "output", vocab, embd);
    return {tensors, layerCount: layers, embd, ff, headCount: heads, headCountKv: kvHeads, vocab, weightBytes: tensors.reduce((s, t) => s + t.bytes, 0)};
}

/**
 * A GPU machine in the shape of an H100 + 16-vCPU host: the CPU streams weights at `cpuGBps` at decode, the GPU is 20× faster,
 * H2D 55 GB/s pinned / 21 GB/s pageable, a switch costs 30 µs.
 */
export function fakeProfile(model: PlannerModel, options: {cpuGBps?: number; gpuDevice?: string} = {}): MachineProfile {
    const cpuBps = (options.cpuGBps ?? 50) * 1e9;
    const gpu = options.gpuDevice ?? "CUDA0";
    const ops = new Map<string, OperatorShape & {bytes: number}>();
    // an expert weight's op is one expert's matrix: its bytes are the tensor's share of one expert
    for (const t of model.tensors) if (t.op != null) ops.set(`${t.op.type}:${t.op.rows}x${t.op.cols}`, {...t.op, bytes: opBytes(t)});
    const matmuls: MatmulPoint[] = [];
    for (const op of ops.values()) {
        for (const batch of [1, 32, 128, 512, 2048]) {
            const flops = 2 * op.rows * op.cols * batch;
            const cpu = Math.max(op.bytes / cpuBps, flops / 1e12) * 1e6 + 5;
            const gpuUs = Math.max(op.bytes / (cpuBps * 20), flops / 100e12) * 1e6 + 8;
            matmuls.push({...op, device: "CPU", batch, supported: true, medianUs: cpu, minUs: cpu, samples: 5});
            matmuls.push({...op, device: gpu, batch, supported: true, medianUs: gpuUs, minUs: gpuUs, samples: 5});
        }
    }
    return {
        version: 1, key: "fake", createdAt: "2026-01-01T00:00:00.000Z", llamaCppRelease: "fake", backend: "cuda", threads: 16,
        devices: [{name: "CPU", type: "cpu"}, {name: gpu, type: "gpu"}], operators: [...ops.values()], matmuls,
        transfers: [{device: gpu, pinnedH2dBytesPerSec: 55e9, pageableH2dBytesPerSec: 21e9, d2hBytesPerSec: 20e9, switchUs: 30, copySmallUs: 10, launchUs: 20}],
        cpuReadBytesPerSec: cpuBps * 2, elapsedMs: 0, truncated: false
    };
}

/**
 * The planner's view of a synthetic model's shape without writing the file (Qwen3-30B-A3B is 30 GiB at q8_0): its
 * tensors as makeSyntheticModel would write them, F16 or q8_0 bytes, experts used per token from the shape.
 */
export function fakeModelOfShape(shape: SyntheticModelShape, type: "f16" | "q8_0"): PlannerModel {
    const tensors: PlannerTensor[] = syntheticTensorSpecs(shape, type).map((spec) => {
        const dims = spec.shape.map(Number);
        const {layer, role} = parseTensorName(spec.name);
        const shaped = {name: spec.name, role, type: spec.type, shape: dims};
        const bytes = Math.round(dims.reduce((a, b) => a * b, 1) * (BYTES_PER_ELEMENT[spec.type] ?? 2));
        const expert = expertOperatorOf(shaped);
        return expert == null
            ? {name: spec.name, layer, role, type: spec.type, bytes, op: operatorOf(shaped)}
            : {name: spec.name, layer, role, type: spec.type, bytes, op: expert.op, experts: {count: expert.count, used: shape.expertsUsed ?? 1}};
    });
    return {
        tensors, layerCount: shape.layers, embd: shape.embd, ff: shape.ff, headCount: shape.heads, headCountKv: shape.kvHeads,
        vocab: shape.vocab, ...(shape.headDim != null ? {headDim: shape.headDim} : {}), weightBytes: tensors.reduce((s, t) => s + t.bytes, 0)
    };
}
