import {describe, expect, it} from "vitest";
import {matmulUs, type MachineProfile, type MatmulPoint} from "./MachineProfile.js";

function point(rows: number, cols: number, batch: number, ms: number, type = "f16", device = "Vulkan0"): MatmulPoint {
    return {device, type, rows, cols, batch, supported: true, medianUs: ms * 1000, minUs: ms * 1000, samples: 3};
}

/** Only `matmuls` is read by matmulUs. */
function profileOf(matmuls: MatmulPoint[]): MachineProfile {
    return {matmuls} as unknown as MachineProfile;
}

describe("matmul time above an operator's largest measured batch", () => {
    // llvmpipe, cached profile of the 100 MiB F16 model: the 1024×1024 op measured up to 512 tokens, the others
    // skipped above 32 (their linear estimate passed the per-point bound)
    const profile = profileOf([
        point(1024, 1024, 1, 12.7), point(1024, 1024, 32, 122.6), point(1024, 1024, 128, 233.3), point(1024, 1024, 512, 859.9),
        point(2816, 1024, 1, 30.8), point(2816, 1024, 32, 311.0)
    ]);

    it("grows as the same device's operator measured that far grew, not linearly", () => {
        // 1024×1024 from 32 to 64 tokens: interpolated 122.6 → 159.5 ms, ×1.30; so 2816×1024: 311 × 1.30
        const grown = matmulUs(profile, "Vulkan0", {type: "f16", rows: 2816, cols: 1024}, 64) / 1000;
        expect(grown).toBeCloseTo(311.0 * (122.6 + (233.3 - 122.6) * 32 / 96) / 122.6, 6);
        expect(grown).toBeLessThan(311.0 * 2);
    });

    it("is linear beyond every measured batch, and where no other operator was measured further", () => {
        expect(matmulUs(profile, "Vulkan0", {type: "f16", rows: 1024, cols: 1024}, 1024) / 1000).toBeCloseTo(859.9 * 2, 6);
        const alone = profileOf([point(2048, 2048, 1, 45.3, "q8_0"), point(2048, 2048, 32, 300, "q8_0")]);
        expect(matmulUs(alone, "Vulkan0", {type: "q8_0", rows: 2048, cols: 2048}, 64) / 1000).toBeCloseTo(600, 6);
    });

    it("never grows faster than linearly, nor shrinks", () => {
        // a reference curve steeper than linear (noise) is capped at linear; a flat one at 1
        const steep = profileOf([point(64, 64, 1, 1), point(64, 64, 32, 100), point(128, 128, 1, 2)]);
        expect(matmulUs(steep, "Vulkan0", {type: "f16", rows: 128, cols: 128}, 32) / 1000).toBeCloseTo(64, 6);
        const falling = profileOf([point(64, 64, 1, 5), point(64, 64, 32, 4), point(128, 128, 1, 2)]);
        expect(matmulUs(falling, "Vulkan0", {type: "f16", rows: 128, cols: 128}, 32) / 1000).toBeCloseTo(2, 6);
    });
});
