import {describe, expect, it} from "vitest";
import {mixedCorpusPlacement} from "./corpusPlacement.js";

const tensor = (name: string) => {
    const layer = /^blk\.(\d+)\./.exec(name)?.[1];
    return {name, layer: layer == null ? null : Number(layer)};
};

describe("the corpus's forced mixed placement", () => {
    it("puts the first half's FFN and the second half's other tensors on the device, the rest and the globals on the CPU", () => {
        const tensors = ["token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_up.weight", "blk.0.ffn_gate_exps.weight", "blk.0.ffn_norm.weight",
            "blk.1.attn_kv_a_mqa.weight", "blk.1.ffn_down_shexp.weight", "blk.1.ssm_in.weight", "output.weight"].map(tensor);
        const placement = mixedCorpusPlacement(tensors, "Vulkan0")!;
        // tensorwise loads every layer onto the device: the default is the device and the host side is listed
        expect(placement.file.defaultBufferType).toBe("Vulkan0");
        expect(placement.file.tensors).toEqual({
            "token_embd.weight": "CPU", "blk.0.attn_q.weight": "CPU", "blk.1.ffn_down_shexp.weight": "CPU", "output.weight": "CPU"
        });
        expect([placement.onDevice, placement.onHost]).toEqual([5, 4]);
    });

    it("rounds the first half up (3 layers: 0 and 1), and a one-layer model without FFN tensors puts its layer on the device", () => {
        const three = mixedCorpusPlacement(["blk.0.ffn_up.weight", "blk.1.ffn_up.weight", "blk.2.ffn_up.weight"].map(tensor), "CUDA0")!;
        expect(three.file.tensors).toEqual({"blk.2.ffn_up.weight": "CPU"});
        const oneLayer = mixedCorpusPlacement(["token_embd.weight", "blk.0.ssm_in.weight", "blk.0.ssm_out.weight"].map(tensor), "Vulkan0")!;
        expect(oneLayer.file.tensors).toEqual({"token_embd.weight": "CPU"});
        expect(mixedCorpusPlacement([tensor("token_embd.weight")], "Vulkan0")).toBeNull();
    });
});
