import {mkdtempSync, writeFileSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {buildTinyGguf, kv} from "../engine/gguf/testing/tinyGguf.js";
import {tinyModelSpec} from "../engine/gguf/testing/tinyModelSpec.js";
import type {TinyModelOptions} from "../engine/gguf/testing/tinyModelSpec.js";
import {main} from "./main.js";
import type {CliIo} from "./CliIo.js";

function captureIo(): CliIo & {stdout: string[]; stderr: string[]} {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return {stdout, stderr, out: (line) => stdout.push(line), err: (line) => stderr.push(line)};
}

const dir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-cli-"));

describe("tensorwise CLI", () => {
    it("explains a bad call with the usage and exit code 2", async () => {
        const io = captureIo();
        expect(await main(["chat", "model.gguf"], io)).toBe(2);
        expect(io.stderr.join("\n")).toMatch(/--prompt is required[\s\S]*usage: tensorwise chat/);
        const unknown = captureIo();
        expect(await main(["frobnicate"], unknown)).toBe(2);
        expect(unknown.stderr.join("\n")).toContain('unknown command "frobnicate"');
        const budget = captureIo();
        expect(await main(["chat", "m.gguf", "--prompt", "hi", "--auto", "--budget", "150%"], budget)).toBe(2);
        expect(budget.stderr.join("\n")).toContain("--budget must be");
    });

    it("writes a model, inspects it, and chats with it on the CPU, all as JSON", async () => {
        const modelPath = path.join(dir, "tiny.gguf");
        const make = captureIo();
        expect(await main(["make-model", modelPath, "--preset", "tiny", "--type", "q8_0", "--layers", "3", "--json"], make)).toBe(0);
        expect(JSON.parse(make.stdout.join("\n"))).toMatchObject({tensorCount: 1 + 3 * 9 + 2});

        const inspect = captureIo();
        expect(await main(["inspect", modelPath, "--json"], inspect)).toBe(0);
        const model = JSON.parse(inspect.stdout.join("\n")) as {architecture: string; layerCount: number; tensors: {role: string}[]};
        expect(model.architecture).toBe("llama");
        expect(model.layerCount).toBe(3);
        expect(model.tensors.filter((tensor) => tensor.role === "ffn_up")).toHaveLength(3);

        const chat = captureIo();
        const code = await main(["chat", modelPath, "--gpu", "cpu", "--prompt", "Hello there", "--max-tokens", "6", "--context", "1024", "--threads", "2", "--json"], chat);
        expect(chat.stderr.join("\n")).not.toContain("error:");
        expect(code).toBe(0);
        const result = JSON.parse(chat.stdout.join("\n")) as {timing: {generatedTokens: number; ttftMs: number}; measured: {host: {weightsBytes: number}}};
        expect(result.timing.generatedTokens).toBeGreaterThan(0);
        expect(result.timing.ttftMs).toBeGreaterThan(0);
        expect(result.measured.host.weightsBytes).toBeGreaterThan(0);
    });

    it("rejects a file that is not a GGUF model with a clear message", async () => {
        const bogus = path.join(dir, "notes.gguf");
        writeFileSync(bogus, "this is not a model\n".repeat(10));
        const io = captureIo();
        expect(await main(["inspect", bogus], io)).toBe(1);
        expect(io.stderr).toEqual(["error: this file is not a GGUF model (it does not start with the GGUF signature)"]);
    });
});

describe("tensorwise CLI on models llama.cpp would abort on", () => {
    // Each of these passes as GGUF; loaded, llama.cpp fails a GGML_ASSERT (SIGABRT) or runs out of memory.
    const hostile: Array<readonly [string, TinyModelOptions, RegExp]> = [
        ["head_count 0", {hparams: {"attention.head_count": kv.u32("llama.attention.head_count", 0)}},
            /^error: "llama\.attention\.head_count" is 0, but llama\.cpp needs it to be positive$/],
        ["expert_count without expert tensors",
            {hparams: {expert_count: kv.u32("llama.expert_count", 4), expert_used_count: kv.u32("llama.expert_used_count", 2)}},
            /^error: "llama\.expert_count" is 4, but the file has no expert tensors/],
        ["block_count 4294967295", {hparams: {block_count: kv.u32("llama.block_count", 0xffff_ffff)}},
            /^error: "llama\.block_count" declares 4294967295 layers, but llama\.cpp needs between 1 and 512$/]
    ];
    const write = (name: string, options: TinyModelOptions): string => {
        const file = path.join(dir, `${name.replace(/\W+/g, "-")}.gguf`);
        writeFileSync(file, buildTinyGguf(tinyModelSpec(options)).bytes);
        return file;
    };

    it.each(hostile)("inspect, plan and chat refuse %s with exit code 1 and a one-line error", async (name, options, expected) => {
        const file = write(name, options);
        const runs = [
            ["inspect", file],
            ["plan", file, "--gpu", "cpu", "--budget", "50%", "--strategy", "layers", "--json"],
            ["chat", file, "--gpu", "cpu", "--prompt", "hi", "--max-tokens", "2", "--threads", "1"]
        ];
        for (const argv of runs) {
            const io = captureIo();
            expect(await main(argv, io), argv[0]).toBe(1);
            expect(io.stdout, argv[0]).toEqual([]);
            // Progress lines (chat prints "inspect: validating the GGUF file") may come first; the error is one line.
            const errors = io.stderr.filter((line) => line.startsWith("error:"));
            expect(errors, argv[0]).toHaveLength(1);
            expect(io.stderr.at(-1), argv[0]).toMatch(expected);
            expect(io.stderr.join("\n"), argv[0]).not.toMatch(/\n\s+at |llama\.cpp:/);
        }
    }, 120_000);
});
