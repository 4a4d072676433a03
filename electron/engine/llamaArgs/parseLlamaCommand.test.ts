/**
 * llama.cpp command lines as users paste them (MoE `-ot` recipes, `--n-cpu-moe`, `-ts` splits, quantized KV, wrapped
 * lines, environment variables, llama-bench), read into what llama.cpp would build — and every shape of wrong input
 * refused by name.
 */
import {describe, expect, it} from "vitest";
import {LLM_FFN_EXPS_REGEX, parseLlamaCommand, priceableCommand, LlamaCommandError} from "./parseLlamaCommand.js";

const refusedFlags = (line: string) => parseLlamaCommand(line).refused.map((note) => note.flag);

describe("parseLlamaCommand: commands from users' reports", () => {
    it("reads a Qwen3-30B-A3B recipe: every layer, experts to the CPU by -ot, flash attention, a quantized KV cache", () => {
        const command = parseLlamaCommand(`./build/bin/llama-server -m ~/models/Qwen3-30B-A3B-Q4_K_M.gguf -ngl 99 \\
            -ot ".ffn_.*_exps.=CPU" -c 32768 -fa on -ctk q8_0 -ctv q8_0 --jinja --temp 0.6 --port 8080`);
        expect(command.refused).toEqual([]);
        expect(command).toMatchObject({
            program: "llama-server", modelPath: "~/models/Qwen3-30B-A3B-Q4_K_M.gguf", gpuLayers: 99, contextSize: 32768,
            flashAttention: "on", cacheTypeK: "q8_0", cacheTypeV: "q8_0",
            overrides: [{pattern: ".ffn_.*_exps.", bufferType: "CPU"}]
        });
        // the model, the template, sampling and the port are listed, not dropped
        expect(command.notPriced.map((note) => note.flag)).toEqual(["-m", "--jinja", "--temp", "--port"]);
    });

    it("keeps several -ot in the order llama.cpp appends them, and each comma-separated pair of one -ot", () => {
        const command = parseLlamaCommand("llama-server -m m.gguf -ngl 999 -ot 'blk\\.(1[0-9]|2[0-9])\\.ffn_.*_exps\\.=CPU' " +
            "--override-tensor 'blk\\.3\\.ffn_up_exps=CUDA0,blk\\.3\\.ffn_down_exps=CPU'");
        expect(command.overrides.map((o) => [o.pattern, o.bufferType])).toEqual([
            ["blk\\.(1[0-9]|2[0-9])\\.ffn_.*_exps\\.", "CPU"], ["blk\\.3\\.ffn_up_exps", "CUDA0"], ["blk\\.3\\.ffn_down_exps", "CPU"]
        ]);
    });

    it("turns --n-cpu-moe N into llama.cpp's N overrides and --cpu-moe into its one, in command order with -ot", () => {
        const command = parseLlamaCommand("llama-server -m m.gguf --n-gpu-layers 999 --n-cpu-moe 3 -ot 'output=CPU' --cpu-moe");
        expect(command.overrides.map((o) => o.pattern)).toEqual([
            `blk\\.0${LLM_FFN_EXPS_REGEX}`, `blk\\.1${LLM_FFN_EXPS_REGEX}`, `blk\\.2${LLM_FFN_EXPS_REGEX}`, "output", LLM_FFN_EXPS_REGEX
        ]);
        expect(command.overrides.every((o) => o.bufferType === "CPU")).toBe(true);
    });

    it("reads a split over two GPUs, the devices and the main GPU (refused later where there is one GPU)", () => {
        const command = parseLlamaCommand("llama-cli -m m.gguf -ngl 40 -ts 3,1 -sm layer -mg 0 -dev CUDA0,CUDA1");
        expect(command).toMatchObject({program: "llama-cli", gpuLayers: 40, tensorSplit: [3, 1], splitMode: "layer", mainGpu: 0, devices: ["CUDA0", "CUDA1"]});
        expect(command.refused).toEqual([]);
    });

    it("applies LLAMA_ARG_* variables first and the command line after, as common_params_parse_ex does", () => {
        const command = parseLlamaCommand("LLAMA_ARG_N_GPU_LAYERS=20 LLAMA_ARG_FLASH_ATTN=off CUDA_VISIBLE_DEVICES=0 llama-server -m m.gguf -fa on");
        expect(command.gpuLayers).toBe(20);
        expect(command.flashAttention).toBe("on");
        expect(command.notPriced.map((note) => note.flag)).toContain("CUDA_VISIBLE_DEVICES=…");
    });

    it("reads --flags_with_underscores as llama.cpp does, -ngl all/auto, --no-kv-offload, --no-op-offload and the load mode", () => {
        const command = parseLlamaCommand("llama-server --ctx_size 4096 -ngl all -nkvo --no-op-offload -lm none -ub 1024 -b 4096 -t 8 -np 4 --fit off");
        expect(command).toMatchObject({contextSize: 4096, gpuLayers: "all", kvOffload: false, opOffload: false, loadMode: "none",
            ubatch: 1024, batch: 4096, threads: 8, parallel: 4, fit: false});
        expect(parseLlamaCommand("llama-server -ngl auto").gpuLayers).toBe("auto");
        expect(parseLlamaCommand("llama-server").gpuLayers).toBe("auto");
    });

    it("reads llama-bench's own spelling: -nkvo 1, -nopo 1, several overrides joined by ;", () => {
        const command = parseLlamaCommand("llama-bench -m m.gguf -ngl 99 -ncmoe 2 -fa 1 -nkvo 1 -nopo 1 -ot 'a=CPU;b=CPU' -p 512 -n 128 -r 3");
        expect(command.refused).toEqual([]);
        expect(command).toMatchObject({program: "llama-bench", gpuLayers: 99, flashAttention: "on", kvOffload: false, opOffload: false});
        expect(command.overrides.map((o) => o.pattern)).toEqual([`blk\\.0${LLM_FFN_EXPS_REGEX}`, `blk\\.1${LLM_FFN_EXPS_REGEX}`, "a", "b"]);
    });
});

describe("parseLlamaCommand refuses by name what llama.cpp would refuse, or what cannot be priced", () => {
    it("an unknown flag, a removed one (with llama.cpp's message) and an old spelling (with this build's)", () => {
        const command = parseLlamaCommand("llama-server -m m.gguf --gpu-layerz 10 --draft-max 16 --no-mmap");
        expect(command.refused).toEqual([
            {flag: "--gpu-layerz", why: "not a flag of llama-server in this llama.cpp"},
            {flag: "--draft-max", why: "removed from llama.cpp: use --spec-draft-n-max or --spec-ngram-mod-n-max"},
            {flag: "--no-mmap", why: "not a flag of this llama.cpp: this llama.cpp spells it `--load-mode none` (-lm none)"}
        ]);
        expect(() => priceableCommand(command)).toThrow(LlamaCommandError);
        expect(() => priceableCommand(command)).toThrow(/--gpu-layerz.*--draft-max.*--no-mmap/);
    });

    it("values of the right shape but wrong: numbers with junk, negative sizes, zero batches, unknown enums and KV types", () => {
        for (const [line, flag] of [
            ["-ngl 1e3", "-ngl"], ["-ngl 20abc", "-ngl"], ["-ngl -5", "-ngl"], ["-c -1", "-c"], ["-ub 0", "-ub"], ["-b 99999999999", "-b"],
            ["-fa maybe", "-fa"], ["-fa ON", "-fa"], ["-ctk q3_K", "-ctk"], ["-ctv f8", "-ctv"], ["-sm rows", "-sm"], ["-lm mmap,mlock", "-lm"],
            ["-ncmoe -1", "-ncmoe"], ["-ts 3,x", "-ts"], ["-t 0", "-t"], ["-np 0", "-np"], ["--fit maybe", "--fit"], ["-fitt 512,1024", "-fitt"]
        ] as const)
            expect(refusedFlags(`llama-server ${line}`), line).toEqual([flag]);
    });

    it("an override without a buffer type or with a pattern that is not a regular expression", () => {
        expect(refusedFlags("llama-server -ot 'blk\\.1\\.ffn_up'")).toEqual(["-ot"]);
        expect(refusedFlags("llama-server -ot '(unclosed=CPU'")).toEqual(["-ot"]);
    });

    it("a flag that expects a value at the end, a stray word, --flag=value, another program, a flag of another program", () => {
        expect(refusedFlags("llama-server -m m.gguf -ngl")).toEqual(["-ngl"]);
        expect(refusedFlags("llama-server model.gguf")).toEqual(["model.gguf"]);
        expect(parseLlamaCommand("llama-server --ctx-size=4096").refused[0]!.why).toContain('write "--ctx-size 4096"');
        expect(refusedFlags("ollama run qwen3")).toEqual(["ollama"]);
        // -p is a prompt for llama-cli but not a flag of llama-server (set_examples)
        expect(refusedFlags("llama-cli -p hello")).toEqual([]);
        expect(refusedFlags("llama-server --mmproj-url x --list-devices").length).toBeLessThan(2);
    });

    it("what a shell would evaluate: variables, substitutions, pipes, unquoted wildcards, unclosed quotes", () => {
        for (const line of ["llama-server -m $MODEL", "llama-server -m \"$HOME/m.gguf\"", "llama-server -t `nproc`", "llama-server -m m.gguf | tee log",
            "llama-server -ot .ffn_.*_exps.=CPU", "llama-server -ot 'blk=CPU", "llama-server -m m.gguf > out.txt", "llama-server -m m.gguf && echo"]) {
            const command = parseLlamaCommand(line);
            expect(command.refused.map((note) => note.flag), line).toEqual(["(the command line)"]);
        }
    });

    it("llama-bench sweeps: several values or several -ot are one configuration each; one is priced", () => {
        expect(refusedFlags("llama-bench -m m.gguf -ngl 10,20,30")).toEqual(["-ngl"]);
        expect(refusedFlags("llama-bench -m m.gguf -ot a=CPU -ot b=CPU")).toEqual(["-ot"]);
        expect(refusedFlags("llama-bench -mmp 0")).toEqual(["-mmp"]);
    });

    it("speculative flags are refused until a command's draft is priced", () => {
        expect(refusedFlags("llama-server -m m.gguf -md draft.gguf --spec-draft-n-max 8")).toEqual(["-md", "--spec-draft-n-max"]);
    });
});
