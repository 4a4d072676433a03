import {mkdtempSync, readFileSync, writeFileSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {buildTinyGguf, kv} from "../engine/gguf/testing/tinyGguf.js";
import {tinyModelSpec} from "../engine/gguf/testing/tinyModelSpec.js";
import {makeSyntheticModel} from "../engine/writer/makeSyntheticModel.js";
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
        expect(budget.stderr.join("\n")).toMatch(/--budget: The GPU budget must be .* at most 100%/);
    });

    it("refuses every out-of-range or oddly written number with a sentence naming the flag, before loading anything", async () => {
        const refused: [string[], RegExp][] = [
            [["chat", "m.gguf", "--prompt", "hi", "--threads", "100000"], /--threads: The thread count must be an integer from 1 to \d+ \(this machine has \d+ logical cores\)/],
            [["chat", "m.gguf", "--prompt", "hi", "--threads", "0"], /--threads: .*from 1/],
            [["chat", "m.gguf", "--prompt", "hi", "--max-tokens", "0x10"], /--max-tokens: The max tokens must be an integer/],
            [["chat", "m.gguf", "--prompt", "hi", "--max-tokens", " 3"], /--max-tokens: /],
            [["chat", "m.gguf", "--prompt", "hi", "--max-tokens", "0"], /--max-tokens: /],
            [["chat", "m.gguf", "--prompt", "hi", "--temperature", "NaN"], /--temperature: The temperature must be a number from 0 to 10/],
            [["chat", "m.gguf", "--prompt", "hi", "--temperature", "Infinity"], /--temperature: /],
            [["chat", "m.gguf", "--prompt", "hi", "--temperature=-1"], /--temperature: /],
            [["chat", "m.gguf", "--prompt", "hi", "--context", "2147483648"], /--context: The context size must be an integer from 64 to 1048576 tokens/],
            [["chat", "m.gguf", "--prompt", "hi", "--budget", "50%"], /--budget only applies to --auto/],
            [["chat", "m.gguf", "--prompt", "hi", "--auto", "--budget", "1e400"], /--budget/],
            [["plan", "m.gguf", "--prompt-tokens", "99999999999999"], /--prompt-tokens: The prompt length must be an integer from 1 to 131072 tokens/],
            [["plan", "m.gguf", "--prompt-tokens", "100000000"], /--prompt-tokens: /],
            [["plan", "m.gguf", "--prompt-tokens", "4096", "--context", "2048"], /do not fit the context of 2048 tokens/],
            [["bench", "m.gguf", "--prompts", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"], /--prompts must list 1 to 16 values/],
            [["bench", "m.gguf", "--gens", "1"], /--gens: The generation length must be an integer from 2/],
            [["bench", "m.gguf", "--repeats", "1000"], /--repeats: /],
            [["profile", "m.gguf", "--threads", "1.5"], /--threads: /],
            [["make-model", "x.gguf", "--layers", "0"], /--layers: The layer count must be an integer from 1 to 512/],
            [["make-model", "x.gguf", "--vocab", "99999999999"], /--vocab: /],
            [["make-model", "x.gguf", "--experts", "2000"], /--experts: The expert count must be an integer from 1 to 1024/],
            [["make-model", "x.gguf", "--preset", "mixtral-mini", "--experts-used", "9"], /expertsUsed must be from 1 to the 8 experts/],
            [["make-model", "x.gguf", "--arch", "gpt2"], /--arch must be llama or qwen3moe/],
            [["plan", "m.gguf", "--op-offload", "maybe"], /--op-offload must be on, off or auto/],
            [["chat", "m.gguf", "--prompt", "hi", "--flash-attention", "1"], /--flash-attention must be on, off or auto/],
            [["serve", "m.gguf", "--use-gpu", "yes"], /--use-gpu must be on, off or auto/],
            ...["", "my model", "tab\tname", "a\u001b[2Jb", "modèle", "x".repeat(129)].map((alias): [string[], RegExp] =>
                [["serve", "m.gguf", "--alias", alias], /--alias must be 1 to 128 printable ASCII characters without spaces/]),
            ...["", "=-1", "1.5", "4294967296", "1e3", "0x10", " 7", "99999999999999999999"].map((seed): [string[], RegExp] =>
                [seed.startsWith("=") ? ["serve", "m.gguf", `--seed${seed}`] : ["serve", "m.gguf", "--seed", seed], /--seed must be an integer from 0 to 4294967295/]),
            [["plan", "m.gguf", "--kv-cache-type", "q4_1"], /--kv-cache-type must be one of f16, q8_0, q4_0/],
            [["chat", "m.gguf", "--prompt", "hi", "--kv-cache-type", "q8_0", "--flash-attention", "off"], /needs flash attention/],
            // speculative decoding: every choice by name, each flag only with the kind that uses it, lengths bounded
            ...["NGRAM", "", "lookahead", "on"].map((spec): [string[], RegExp] => [["chat", "m.gguf", "--prompt", "hi", "--spec", spec], /--spec must be one of auto, off, ngram, draft, mtp/]),
            [["chat", "m.gguf", "--prompt", "hi", "--spec", "draft"], /--spec draft needs the draft model \(--model-draft FILE\)/],
            [["chat", "m.gguf", "--prompt", "hi", "--spec", "ngram", "--model-draft", "d.gguf"], /--model-draft applies to --spec draft or auto, not --spec ngram/],
            [["serve", "m.gguf", "--spec-draft-n-max", "4"], /apply to speculative decoding: add --spec/],
            [["plan", "m.gguf", "--spec", "draft", "--model-draft", "d.gguf", "--spec-ngram-map-k-size-n", "3"], /--spec-ngram-map-k-size-\* apply to --spec ngram or auto, not --spec draft/],
            [["chat", "m.gguf", "--prompt", "hi", "--spec", "off", "--spec-draft-n-max", "4"], /does not apply to --spec off/],
            ...["0", "65", "2.5", "=-1", "0x4"].map((n): [string[], RegExp] => [["chat", "m.gguf", "--prompt", "hi", "--spec", "ngram", ...(n.startsWith("=") ? [`--spec-draft-n-max${n}`] : ["--spec-draft-n-max", n])], /--spec-draft-n-max: /]),
            [["chat", "m.gguf", "--prompt", "hi", "--spec", "ngram", "--spec-ngram-map-k-size-m", "100"], /--spec-ngram-map-k-size-m: /]
        ];
        for (const [argv, message] of refused) {
            const io = captureIo();
            // "m.gguf" does not exist: a refusal that names the flag came before any attempt to open it
            expect(await main(argv, io), argv.join(" ")).toBe(2);
            expect(io.stderr.join("\n"), argv.join(" ")).toMatch(message);
        }
    });

    it("prints each command's help for --help", async () => {
        for (const command of ["chat", "plan", "bench", "inspect", "make-model", "profile", "devices"]) {
            const io = captureIo();
            expect(await main([command, "--help"], io), command).toBe(0);
            expect(io.stdout.join("\n"), command).toContain(`usage: tensorwise ${command}`);
        }
    });

    it("prints model-file text without terminal control sequences", async () => {
        const modelPath = path.join(dir, "escapes.gguf");
        const hostile = "\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u009b6n";
        const make = captureIo();
        expect(await main(["make-model", modelPath, "--preset", "tiny", "--layers", "1", "--json"], make)).toBe(0);
        // rename the model in place: same length keeps every offset valid
        const bytes = readFileSync(modelPath);
        const name = Buffer.from("synthetic-tiny-f16", "utf8");
        const at = bytes.indexOf(name);
        expect(at).toBeGreaterThan(0);
        Buffer.from(hostile.slice(0, name.length).padEnd(name.length, "x"), "latin1").copy(bytes, at);
        writeFileSync(modelPath, bytes);
        const io = captureIo();
        expect(await main(["inspect", modelPath], io)).toBe(0);
        const printed = io.stdout.join("\n") + io.stderr.join("\n");
        expect(printed).toContain("]0;pwned");
        // eslint-disable-next-line no-control-regex -- control characters are what must not be printed
        expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
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
        const result = JSON.parse(chat.stdout.join("\n")) as {
            timing: {generatedTokens: number; promptTokens: number; ttftMs: number}; measured: {host: {weightsBytes: number}};
            tokens: {prompt: number[]; reply: number[]}; stopReason: string;
        };
        expect(result.timing.generatedTokens).toBeGreaterThan(0);
        expect(result.timing.ttftMs).toBeGreaterThan(0);
        expect(result.measured.host.weightsBytes).toBeGreaterThan(0);
        // the token ids scripts compare with stock llama.cpp (scripts/check/arch-corpus.mjs): the whole templated prompt and each reply token
        expect(result.tokens.prompt).toHaveLength(result.timing.promptTokens);
        expect(result.tokens.reply).toHaveLength(result.timing.generatedTokens);
        expect(["done", "max-tokens", "stop-string"]).toContain(result.stopReason);
    });

    it("chats with a model trained on 256 tokens in a context of 256 when none is chosen, and refuses a larger --context naming both numbers", async () => {
        // llama.cpp takes the trained context for n_ctx 0; the default 2048 is more than 4× what this model was trained for
        const modelPath = path.join(dir, "short-context.gguf");
        await makeSyntheticModel(modelPath, {preset: "tiny", type: "q8_0", contextLength: 256});

        const chat = captureIo();
        const code = await main(["chat", modelPath, "--gpu", "cpu", "--prompt", "Hi", "--max-tokens", "4", "--threads", "2", "--json"], chat);
        expect(chat.stderr.join("\n")).not.toContain("error:");
        expect(code).toBe(0);
        const result = JSON.parse(chat.stdout.join("\n")) as {timing: {generatedTokens: number}; settings: {contextSize: number}};
        expect(result.timing.generatedTokens).toBeGreaterThan(0);
        expect(result.settings.contextSize).toBe(256);

        const tooLong = captureIo();
        expect(await main(["chat", modelPath, "--gpu", "cpu", "--prompt", "Hi", "--max-tokens", "4", "--threads", "2", "--context", "2048"], tooLong)).toBe(1);
        expect(tooLong.stderr.join("\n")).toMatch(/A context of 2048 tokens is more than 4× what this model was trained for \(256 tokens\): choose at most 1024\./);
    });

    it("refuses a placement whose defaultBufferType is not where this machine loads models", async () => {
        const modelPath = path.join(dir, "placed.gguf");
        expect(await main(["make-model", modelPath, "--preset", "tiny", "--layers", "1", "--json"], captureIo())).toBe(0);
        const placementPath = path.join(dir, "cuda.json");
        writeFileSync(placementPath, JSON.stringify({version: 1, defaultBufferType: "CUDA0", rules: []}));
        const io = captureIo();
        expect(await main(["chat", modelPath, "--gpu", "cpu", "--prompt", "hi", "--placement", placementPath], io)).toBe(1);
        expect(io.stderr.join("\n")).toMatch(/defaultBufferType is "CUDA0", but this machine loads models onto CPU/);
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

    it("chat refuses a model whose vocabulary has no byte tokens (llama.cpp's tokenizer would end the process)", async () => {
        // a well-formed llama model with a 6-token SentencePiece vocabulary: inspect shows it, loading it is refused
        const file = write("no-byte-tokens", {});
        const inspect = captureIo();
        expect(await main(["inspect", file, "--json"], inspect)).toBe(0);
        expect(JSON.parse(inspect.stdout.join("\n"))).toMatchObject({missingByteToken: "0x00"});
        const io = captureIo();
        expect(await main(["chat", file, "--gpu", "cpu", "--prompt", "hi", "--max-tokens", "2", "--threads", "1"], io)).toBe(1);
        expect(io.stderr.at(-1)).toMatch(/^error: This model's vocabulary has no token for the byte 0x00/);
    }, 120_000);
});
