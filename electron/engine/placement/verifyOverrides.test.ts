import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePlacement } from "./compilePlacement.js";
import type { Placement, TensorBufferOverride } from "./Placement.js";
import { llamaTensorList, seededRandom } from "./testing/llamaTensorList.js";
import { llamaCppNaturalBufferType, resolveBufferTypes, verifyCompiledPlacement } from "./verifyOverrides.js";
import {requiredOrSkip} from "../testing/requiredOrSkip.js";

const tensors = llamaTensorList({ layers: 32 });
const names = tensors.map((t) => t.name);

describe("resolveBufferTypes", () => {
    it("uses the first matching override (regex_search: substring, so unanchored patterns over-match)", () => {
        const overrides: TensorBufferOverride[] = [
            { pattern: "blk\\.1", bufferType: "CPU" },
            { pattern: "ffn_up", bufferType: "CUDA1" }
        ];
        const probe = ["blk.1.ffn_up.weight", "blk.11.ffn_up.weight", "blk.2.ffn_up.weight", "blk.1.attn_q.weight", "blk.2.attn_q.weight"];
        const resolved = resolveBufferTypes(overrides, probe, "CUDA0");
        expect([...resolved.values()]).toEqual(["CPU", "CPU", "CUDA1", "CPU", "CUDA0"]);
    });

    it("keeps the input layer on the CPU when no override matches, like llama.cpp", () => {
        const resolved = resolveBufferTypes([], names, "Vulkan0");
        expect(resolved.get("token_embd.weight")).toBe("CPU");
        expect(resolved.get("output.weight")).toBe("Vulkan0");
        expect(resolved.get("blk.0.attn_q.weight")).toBe("Vulkan0");
        expect(llamaCppNaturalBufferType("CUDA0")("token_embd_norm.weight")).toBe("CUDA0");
    });

    it("explains an invalid pattern", () => {
        expect(() => resolveBufferTypes([{ pattern: "(", bufferType: "CPU" }], names, "CUDA0")).toThrow(/override 0 has an invalid pattern/);
    });
});

describe("verifyCompiledPlacement", () => {
    const placement: Placement = { defaultBufferType: "CUDA0", assignments: { "blk.3.ffn_up.weight": "CPU", "blk.30.ffn_up.weight": "CPU" } };

    it("reports nothing for overrides that realise the plan", () => {
        expect(verifyCompiledPlacement(placement, tensors, compilePlacement(placement, tensors).overrides)).toEqual([]);
    });

    it("reports every misplaced tensor with the pattern that decided", () => {
        const unanchored = [{ pattern: "blk\\.3\\.ffn_up", bufferType: "CPU" }];
        expect(verifyCompiledPlacement(placement, tensors, unanchored)).toEqual([
            { tensor: "blk.30.ffn_up.weight", planned: "CPU", resolved: "CUDA0", matchedPattern: null }
        ]);
        const greedy = [{ pattern: "ffn_up", bufferType: "CPU" }];
        const mismatches = verifyCompiledPlacement(placement, tensors, greedy);
        expect(mismatches).toHaveLength(30);
        expect(mismatches[0]).toEqual({ tensor: "blk.0.ffn_up.weight", planned: "CUDA0", resolved: "CPU", matchedPattern: "ffn_up" });
    });
});

/**
 * Cross-check: the simulation uses JS RegExp; llama.cpp uses std::regex (ECMAScript) with regex_search. Build a tiny
 * C++ program and compare first-match indices on generated patterns and near-miss names.
 */
const compiler = ["c++", "g++", "clang++"].find((cxx) => spawnSync(cxx, ["--version"]).status === 0);
requiredOrSkip("the std::regex cross-check", compiler === undefined ? "no C++ compiler (c++, g++ or clang++) on PATH" : null);
describe.skipIf(compiler === undefined)("std::regex agrees with the simulation (needs a C++ compiler)", () => {
    let dir = "";
    let binary = "";
    beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), "tensorwise-regex-"));
        binary = join(dir, "match");
        writeFileSync(join(dir, "match.cpp"), `
#include <iostream>
#include <regex>
#include <string>
#include <vector>
// stdin: count, then patterns one per line, then names one per line. stdout: first matching index or -1 per name.
int main() {
    std::string line; std::getline(std::cin, line);
    size_t count = std::stoul(line);
    std::vector<std::regex> patterns;
    for (size_t i = 0; i < count && std::getline(std::cin, line); i++) patterns.emplace_back(line);
    while (std::getline(std::cin, line)) {
        int found = -1;
        for (size_t i = 0; i < patterns.size(); i++) if (std::regex_search(line, patterns[i])) { found = int(i); break; }
        std::cout << found << "\\n";
    }
}
`);
        execFileSync(compiler as string, ["-O1", "-std=c++17", "-o", binary, join(dir, "match.cpp")]);
    }, 120_000);
    afterAll(() => {
        if (dir !== "") rmSync(dir, { recursive: true, force: true });
    });

    function cppFirstMatch(patterns: readonly string[], probe: readonly string[]): number[] {
        const input = [String(patterns.length), ...patterns, ...probe].join("\n") + "\n";
        return execFileSync(binary, { input }).toString().trim().split("\n").map(Number);
    }

    function jsFirstMatch(patterns: readonly string[], probe: readonly string[]): number[] {
        const regexes = patterns.map((p) => new RegExp(p));
        return probe.map((name) => regexes.findIndex((r) => r.test(name)));
    }

    it("gives the same first match for compiled plans and near-miss names", () => {
        const big = llamaTensorList({ layers: 80 });
        const random = seededRandom(99);
        const plans: Placement[] = [
            { defaultBufferType: "CUDA0", assignments: Object.fromEntries(big.filter((t) => /ffn_(up|gate|down)/.test(t.name)).map((t) => [t.name, "CPU"])) },
            { defaultBufferType: "CUDA0", assignments: Object.fromEntries(big.map((t) => [t.name, random() < 0.5 ? "CPU" : "CUDA0"])) },
            { defaultBufferType: "CUDA0", assignments: Object.fromEntries(big.filter((t) => (t.layer ?? 0) >= 41).map((t) => [t.name, "CPU"])) }
        ];
        const probe = [
            ...big.map((t) => t.name),
            "blk.800.ffn_up.weight", "blk.08.ffn_up.weight", "xblk.3.ffn_up.weight", "blk.3.ffn_up.weight.extra",
            "blk.3.ffn_up.weightx", "blk.3Xffn_up.weight", "blk..ffn_up.weight", "blk.3.ffn_upp.weight", "output.weight.1"
        ];
        for (const plan of plans) {
            const patterns = compilePlacement(plan, big).overrides.map((o) => o.pattern);
            expect(patterns.length).toBeGreaterThan(0);
            expect(cppFirstMatch(patterns, probe)).toEqual(jsFirstMatch(patterns, probe));
        }
    });
});
