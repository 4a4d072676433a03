import {mkdtempSync, writeFileSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {describe, expect, it} from "vitest";
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
        expect(io.stderr.join("\n")).toMatch(/error: .*(magic|GGUF)/i);
    });
});
