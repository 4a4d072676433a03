import {describe, expect, it} from "vitest";
import {
    encodeAs, encodeBf16, encodeF16, encodeF32, encodedBytes, encodeQ4_0, encodeQ8_0, fp16BitsToFp32, fp32ToBf16Bits,
    fp32ToFp16Bits
} from "./quantize.js";

function hex(bytes: Uint8Array): string {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Float32 values from big-endian hex words of their bits, as printed by the C oracle. */
function floatsFromBitsHex(text: string): Float32Array {
    const words = text.match(/.{8}/g) ?? [];
    const bits = new Uint32Array(words.map((word) => Number.parseInt(word, 16)));
    return new Float32Array(bits.buffer);
}

function block(values: readonly number[]): Float32Array {
    const out = new Float32Array(32);
    out.set(values);
    return out;
}

// Expected bytes below were produced by compiling ggml's own `ggml_compute_fp32_to_fp16`, `quantize_row_q8_0_ref`
// and `quantize_row_q4_0_ref` (copied verbatim from the llama.cpp bundled with node-llama-cpp 3.22.1) with gcc.
// Input: block 0 = (i - 16) * 0.37f, block 1 = LCG noise in ±0.02, block 2 = zeros.
const oracleInput = floatsFromBitsHex(
    "c0bd70a4c0b1999ac0a5c290c099eb85c08e147bc0823d71c06ccccdc0551eb8c03d70a4c025c290c00e147bbfeccccdbfbd70a4bf8e147b" +
    "bf3d70a4bebd70a4000000003ebd70a43f3d70a43f8e147b3fbd70a43feccccd400e147b4025c290403d70a440551eb8406ccccd40823d71" +
    "408e147b4099eb8540a5c29040b1999abc9d278abc9e6ae93ae242b83bb0d2473c865bc4bc7dfa26b92c69993afd7cb83b7bebae3c39c314" +
    "bc96c7d23c1fc70d3c98a2ebbc8bb35c3c02d07bbad02c52bb87ae613c96936fbb7616473c945c9c3ca1c4bd3bd690c7bb4a1febb64a6666" +
    "bc0b67a6bb490eeb3be5cb33bc61e673bc86c08a3c6722e1bbf6fd19bca185ea" + "00000000".repeat(32)
);
const oracleQ8_0 =
    "f72981899199a1a9b1b9c1c8d0d8e0e8f0f800081018202830383f474f575f676f7718098584" +
    "0b23699cff0c19498a3f789233f6e576e8747f2aec00c9ec2da7965bd081" + "00".repeat(34);
const oracleQ4_0 =
    "ec39809091a2a2b2b3c4c4d5d5e6e6f7f7f8" + "0e99af1fa716015e9887b6935fe4f02fb5f9" +
    "0080" + "88".repeat(16); // an all-zero block gets d = 0 / -8 = -0.0 (f16 0x8000)

describe("fp32ToFp16Bits", () => {
    it("matches ggml on specials, subnormals, overflow and ties", () => {
        const input = floatsFromBitsHex(
            "00000000800000003f800000c0000000477fe000477fef00477ff000322bcc77338000003300000033000001387fda403dcccccd" +
            "3eaaaaab3f8010003f8030007f800000ff8000007fc000007149f2ca"
        );
        const expected = "0000 8000 3c00 c000 7bff 7bff 7c00 0000 0001 0000 0001 03ff 2e66 3555 3c00 3c02 7c00 fc00 7e00 7c00"
            .split(" ")
            .map((word) => Number.parseInt(word, 16));
        expect([...input].map(fp32ToFp16Bits)).toEqual(expected);
    });

    it("round-trips every finite half exactly", () => {
        for (let bits = 0; bits < 0x10000; bits++) {
            if ((bits & 0x7c00) === 0x7c00)
                continue;
            expect(fp32ToFp16Bits(fp16BitsToFp32(bits))).toBe(bits);
        }
    });

    it("rounds by hand-computed cases", () => {
        expect(fp32ToFp16Bits(1)).toBe(0x3c00);
        expect(fp32ToFp16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie goes to the even mantissa
        expect(fp32ToFp16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // above the tie rounds up
        expect(fp32ToFp16Bits(-0.5)).toBe(0xb800);
        expect(fp32ToFp16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    });
});

describe("fp32ToBf16Bits", () => {
    it("rounds to nearest even and keeps NaN quiet", () => {
        expect(fp32ToBf16Bits(1)).toBe(0x3f80);
        expect(fp32ToBf16Bits(-2)).toBe(0xc000);
        expect(fp32ToBf16Bits(1 + 2 ** -8)).toBe(0x3f80); // tie to even
        expect(fp32ToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82); // tie to even, upward
        expect(fp32ToBf16Bits(Number.NaN)).toBe(0x7fc0);
    });
});

describe("encodeQ8_0", () => {
    it("matches ggml's quantize_row_q8_0_ref", () => {
        const out = new Uint8Array(3 * 34);
        expect(encodeQ8_0(oracleInput, out)).toBe(102);
        expect(hex(out)).toBe(oracleQ8_0);
    });

    it("encodes a hand-computed block (d = 1, roundf half away from zero)", () => {
        const out = new Uint8Array(34);
        encodeQ8_0(block([127, -127, 0.5, -0.5, 1.5, 2.5, -2.5, 126.4]), out);
        // d = 127 / 127 = 1 -> f16 0x3c00 little-endian; q = roundf(x)
        expect(hex(out)).toBe("003c" + "7f" + "81" + "01" + "ff" + "02" + "03" + "fd" + "7e" + "00".repeat(24));
    });

    it("writes at an offset and rejects partial blocks", () => {
        const out = new Uint8Array(40);
        encodeQ8_0(block([127]), out, 6);
        expect(hex(out.subarray(6, 9))).toBe("003c7f");
        expect(() => encodeQ8_0(new Float32Array(31), out)).toThrow(RangeError);
        expect(() => encodeQ8_0(new Float32Array(32), out, 7)).toThrow(RangeError);
    });
});

describe("encodeQ4_0", () => {
    it("matches ggml's quantize_row_q4_0_ref", () => {
        const out = new Uint8Array(3 * 18);
        expect(encodeQ4_0(oracleInput, out)).toBe(54);
        expect(hex(out)).toBe(oracleQ4_0);
    });

    it("encodes a hand-computed block (max = -8 so d = 1)", () => {
        const values = new Array<number>(32).fill(0);
        values[0] = -8; // -> 0
        values[1] = 7; // -> 15
        values[2] = 7.4; // trunc(15.9) = 15
        values[3] = -0.6; // trunc(7.9) = 7
        values[16] = -0.5; // trunc(8.0) = 8
        values[17] = 3; // 11
        const out = new Uint8Array(18);
        encodeQ4_0(block(values), out);
        // qs[j] = q[j] | q[j + 16] << 4
        expect(hex(out)).toBe("003c" + "80" + "bf" + "8f" + "87" + "88".repeat(12));
    });
});

describe("encodeF32 / encodeF16 / encodeBf16 / encodeAs", () => {
    it("writes little-endian values", () => {
        const src = new Float32Array([1, -2, 0.5]);
        const f32 = new Uint8Array(12);
        expect(encodeF32(src, f32)).toBe(12);
        expect(hex(f32)).toBe("0000803f000000c00000003f");
        const f16 = new Uint8Array(6);
        expect(encodeF16(src, f16)).toBe(6);
        expect(hex(f16)).toBe("003c00c00038");
        const bf16 = new Uint8Array(6);
        expect(encodeBf16(src, bf16)).toBe(6);
        expect(hex(bf16)).toBe("803f00c0003f");
    });

    it("dispatches by type name and sizes the output", () => {
        const src = block([1]);
        for (const type of ["f32", "f16", "bf16", "q8_0", "q4_0"] as const) {
            const out = new Uint8Array(encodedBytes(type, 32));
            expect(encodeAs(type, src, out)).toBe(out.length);
        }
        expect(encodedBytes("q8_0", 64)).toBe(68);
        expect(encodedBytes("q4_0", 64)).toBe(36);
    });
});
