import {parseArgs, type ParseArgsConfig} from "node:util";
import {processIo, type CliIo} from "./CliIo.js";
import {terminalSafe} from "../engine/format/terminalSafe.js";
import {devicesCommand} from "./commands/devicesCommand.js";
import {rpcServerCommand} from "./commands/rpcServerCommand.js";
import {UsageError} from "./UsageError.js";
import {inspectCommand} from "./commands/inspectCommand.js";
import {makeModelCommand} from "./commands/makeModelCommand.js";
import {chatCommand} from "./commands/chatCommand.js";
import {planCommand} from "./commands/planCommand.js";
import {parseLlamaCommand, type LlamaCommand} from "../engine/llamaArgs/parseLlamaCommand.js";
import {pullCommand} from "./commands/pullCommand.js";
import {DEFAULT_STALL_MS} from "../engine/hub/hubFetch.js";
import {profileCommand} from "./commands/profileCommand.js";
import {BENCH_OPTIONS, BENCH_USAGE, benchCommand} from "./commands/benchCommand.js";
import {SERVE_OPTIONS, SERVE_USAGE, serveRun} from "./commands/serveFlags.js";
import {STRATEGY_NAMES} from "../engine/planner/planStrategy.js";
import type {StrategyName} from "../contract/strategies.js";
import {TEXT_LIMITS} from "../contract/limits.js";
import {
    flagKnobs, flagNumber, flagProfileTime, flagSpeculative, flagThreads, KNOB_OPTIONS, KNOB_USAGE, parseBudget, parseGpu, PROFILE_SECONDS_OPTION, SPEC_OPTIONS, SPEC_USAGE
} from "./flags.js";
import type {SpeculativeRequest} from "../contract/speculative.js";
import {flagMaxMessageMib, flagPort, flagRpc, flagRpcDevice, flagRpcHost} from "./rpcFlags.js";
import {DEFAULT_RUNTIME_SETTINGS} from "../contract/settings.js";
import {DEFAULT_WORKLOAD} from "../engine/planner/types.js";

type Command = {
    summary: string;
    usage: string;
    options: NonNullable<ParseArgsConfig["options"]>;
    run(io: CliIo, values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
};

const gpuOption = {gpu: {type: "string", default: "auto"}} as const;
const jsonOption = {json: {type: "boolean", default: false}} as const;
const rpcOption = {rpc: {type: "string"}} as const;

/**
 * `--llama-args "…"`: a llama.cpp command line to price beside the plan. Refused here, before any model is read, when
 * it names a flag llama.cpp would refuse or one tensorwise cannot read (every such flag named).
 */
function llamaArgsFlag(value: string | boolean | undefined): {llamaCommand?: LlamaCommand} {
    if (value === undefined) return {};
    if (typeof value !== "string" || value.trim() === "") throw new UsageError("--llama-args needs a llama.cpp command line in quotes");
    const command = parseLlamaCommand(value);
    if (command.refused.length > 0)
        throw new UsageError(`--llama-args: ${command.refused.map((note) => `${note.flag}: ${note.why}`).join("; ")}`);
    return {llamaCommand: command};
}

const commands: Record<string, Command> = {
    devices: {
        summary: "backends, devices, buffer types, free VRAM/RAM",
        usage: "tensorwise devices [--gpu auto|cpu|cuda|vulkan] [--rpc host:port[,host:port…]] [--json]",
        options: {...gpuOption, ...jsonOption, ...rpcOption},
        run: (io, values) => devicesCommand(io, {gpu: parseGpu(values.gpu), json: values.json === true, rpc: flagRpc(values.rpc)})
    },
    "rpc-server": {
        summary: "serve this machine's devices to another tensorwise over llama.cpp's RPC protocol (no authentication)",
        usage: "tensorwise rpc-server [--host 127.0.0.1] [--port 50052] [--device CPU|Vulkan0|CUDA0] [--threads N] [--max-message-mib 1024]",
        options: {host: {type: "string", default: "127.0.0.1"}, port: {type: "string", default: "50052"}, device: {type: "string"}, threads: {type: "string"},
            "max-message-mib": {type: "string"}},
        run: (io, values) => rpcServerCommand(io, {
            host: flagRpcHost(values.host),
            port: flagPort(values.port),
            device: typeof values.device === "string" ? flagRpcDevice(values.device) : undefined,
            threads: flagThreads(values.threads),
            maxMessageBytes: flagMaxMessageMib(values["max-message-mib"])
        })
    },
    inspect: {
        summary: "validate a GGUF file (bounded, out of process) and show its architecture, quant mix and tensors",
        usage: "tensorwise inspect <model.gguf> [--tensors] [--json]",
        options: {...jsonOption, tensors: {type: "boolean", default: false}},
        run: (io, values, positionals) => inspectCommand(io, onePositional(positionals, "model.gguf"), {json: values.json === true, tensors: values.tensors === true})
    },
    "make-model": {
        summary: "write a synthetic llama or qwen3moe GGUF model, dense or mixture-of-experts (random weights), for tests and benchmarks",
        usage: "tensorwise make-model <out.gguf> [--preset tiny|small|llama3.2-3b|llama3-8b|mixtral-mini|qwen3-30b-a3b] [--arch llama|qwen3moe] [--layers N --embd N --ff N --heads N --kv-heads N --head-dim N --vocab N] [--experts N --experts-used K --expert-ff N] [--type f32|f16|bf16|q8_0|q4_0] [--seed N] [--json]",
        options: {
            ...jsonOption, preset: {type: "string"}, layers: {type: "string"}, embd: {type: "string"}, ff: {type: "string"},
            heads: {type: "string"}, "kv-heads": {type: "string"}, vocab: {type: "string"},
            "head-dim": {type: "string"}, experts: {type: "string"}, "experts-used": {type: "string"}, "expert-ff": {type: "string"}, arch: {type: "string"}, type: {type: "string"}, seed: {type: "string"}
        },
        run: (io, values, positionals) => makeModelCommand(io, onePositional(positionals, "out.gguf"), values)
    },
    profile: {
        summary: "time the model's weight operators on every device here, and the transfer costs (cached)",
        usage: "tensorwise profile <model.gguf> [--gpu auto|cpu|cuda|vulkan] [--threads N] [--refresh] [--profile-seconds N] [--json]",
        options: {...gpuOption, ...jsonOption, ...PROFILE_SECONDS_OPTION, threads: {type: "string"}, refresh: {type: "boolean", default: false}},
        run: (io, values, positionals) => profileCommand(io, onePositional(positionals, "model.gguf"), {
            gpu: parseGpu(values.gpu), threads: flagThreads(values.threads), refresh: values.refresh === true, json: values.json === true,
            profile: flagProfileTime(values["profile-seconds"])
        })
    },
    plan: {
        summary: "plan where each tensor lives under a VRAM budget, with predicted TTFT/TPOT/VRAM and llama.cpp flags",
        usage: "tensorwise plan <model.gguf> --budget <MiB|N%|auto> --strategy <cpu|layers|fit|cpu-moe|n-cpu-moe|oato|optimal> [--prompt-tokens N] [--gen-tokens N] " +
            `[--context N] [--gpu …] [--threads N] ${KNOB_USAGE} ${SPEC_USAGE} [--llama-args "<a llama-server/llama-cli/llama-bench command>"] [--profile-seconds N] [--json]`,
        options: {
            ...gpuOption, ...jsonOption, ...PROFILE_SECONDS_OPTION, ...KNOB_OPTIONS, ...SPEC_OPTIONS, budget: {type: "string", default: "auto"}, strategy: {type: "string", default: "optimal"},
            "llama-args": {type: "string"},
            "prompt-tokens": {type: "string"}, "gen-tokens": {type: "string"}, context: {type: "string"}, threads: {type: "string"}
        },
        run: (io, values, positionals) => {
            const promptTokens = flagNumber(values["prompt-tokens"], "prompt-tokens", "promptTokens") ?? DEFAULT_WORKLOAD.promptTokens;
            const genTokens = flagNumber(values["gen-tokens"], "gen-tokens", "genTokens") ?? DEFAULT_WORKLOAD.genTokens;
            const contextSize = flagNumber(values.context, "context", "contextSize") ?? DEFAULT_RUNTIME_SETTINGS.contextSize;
            if (promptTokens + genTokens > contextSize)
                throw new UsageError(`the prompt and the reply (${promptTokens} + ${genTokens} tokens) do not fit the context of ${contextSize} tokens: raise --context or lower --prompt-tokens/--gen-tokens`);
            return planCommand(io, onePositional(positionals, "model.gguf"), {
                gpu: parseGpu(values.gpu),
                budget: parseBudget(String(values.budget)),
                strategy: parseStrategy(values.strategy),
                promptTokens, genTokens, contextSize,
                threads: flagThreads(values.threads),
                knobs: flagKnobs(values),
                ...specFlag(values),
                ...llamaArgsFlag(values["llama-args"]),
                profile: flagProfileTime(values["profile-seconds"]),
                json: values.json === true
            });
        }
    },
    pull: {
        summary: "download a GGUF model from Hugging Face (HF_ENDPOINT, HF_TOKEN) into the app's models folder, resumable and sha256-checked; --list plans every quant here first",
        usage: "tensorwise pull <owner/name[:QUANT]|URL> [--list [--profile]] [--dir D] [--revision R] [--timeout SECONDS] [--gpu auto|cpu|cuda|vulkan] [--json]",
        options: {
            ...gpuOption, ...jsonOption, list: {type: "boolean", default: false}, profile: {type: "boolean", default: false},
            dir: {type: "string"}, revision: {type: "string"}, timeout: {type: "string"}
        },
        run: (io, values, positionals) => pullCommand(io, onePositional(positionals, "owner/name[:QUANT]|URL"), {
            dir: typeof values.dir === "string" ? values.dir : null,
            revision: typeof values.revision === "string" ? values.revision : null,
            list: values.list === true, profile: values.profile === true, gpu: parseGpu(values.gpu), json: values.json === true,
            stallMs: flagStallSeconds(values.timeout)
        })
    },
    bench: {
        summary: "benchmark placement strategies per budget (TTFT/TPOT, memory, predictions) and export report.json/csv/html",
        usage: BENCH_USAGE,
        options: BENCH_OPTIONS,
        run: (io, values, positionals) => benchCommand(io, onePositional(positionals, "model.gguf"), values)
    },
    serve: {
        summary: "serve a model through an OpenAI-compatible API (/v1/chat/completions, /v1/completions), several requests at once",
        usage: SERVE_USAGE,
        options: SERVE_OPTIONS,
        run: (io, values, positionals) => serveRun(io, onePositional(positionals, "model.gguf"), values)
    },
    chat: {
        summary: "load a model with a placement, reply to one prompt, print TTFT/TPOT and memory per buffer type",
        usage: "tensorwise chat <model.gguf> --prompt <text> [--placement file.json | --gpu-layers N | --auto [--budget MiB|N%]] " +
            `[--gpu auto|cpu|cuda|vulkan] [--context N] [--batch N] [--threads N] ${KNOB_USAGE} [--max-tokens N] [--temperature T] [--show-overrides] ` +
            `${SPEC_USAGE} [--rpc host:port,…] [--json]`,
        options: {
            ...gpuOption, ...jsonOption, ...rpcOption, ...KNOB_OPTIONS, ...SPEC_OPTIONS, prompt: {type: "string"}, placement: {type: "string"}, "gpu-layers": {type: "string"},
            auto: {type: "boolean", default: false}, budget: {type: "string"}, context: {type: "string"}, batch: {type: "string"},
            threads: {type: "string"}, "max-tokens": {type: "string"}, temperature: {type: "string"},
            "show-overrides": {type: "boolean", default: false}
        },
        run: (io, values, positionals) => {
            if ((typeof values.prompt !== "string" || values.prompt === "") && !(process.stdin.isTTY && onTerminal.has(io)))
                throw new UsageError("--prompt is required (or run in a terminal for an interactive chat)");
            if (values.budget != null && values.auto !== true)
                throw new UsageError("--budget only applies to --auto (the planner's GPU budget): add --auto, or drop --budget");
            if (typeof values.prompt === "string" && values.prompt.length > TEXT_LIMITS.message)
                throw new UsageError(`--prompt is longer than ${TEXT_LIMITS.message} characters`);
            return chatCommand(io, onePositional(positionals, "model.gguf"), {
                gpu: parseGpu(values.gpu),
                prompt: typeof values.prompt === "string" && values.prompt !== "" ? values.prompt : undefined,
                placement: values.placement as string | undefined,
                gpuLayers: flagNumber(values["gpu-layers"], "gpu-layers", "gpuLayers"),
                auto: values.auto === true,
                budget: values.budget == null ? undefined : parseBudget(String(values.budget)),
                // without --context: 2048 tokens, or the model's trained context where smaller (defaultContextSize)
                contextSize: flagNumber(values.context, "context", "contextSize"),
                batchSize: flagNumber(values.batch, "batch", "batchSize") ?? DEFAULT_RUNTIME_SETTINGS.batchSize,
                threads: flagThreads(values.threads),
                knobs: flagKnobs(values),
                ...specFlag(values),
                maxTokens: flagNumber(values["max-tokens"], "max-tokens", "maxTokens") ?? 64,
                temperature: flagNumber(values.temperature, "temperature", "temperature") ?? 0,
                showOverrides: values["show-overrides"] === true,
                json: values.json === true,
                rpc: flagRpc(values.rpc)
            });
        }
    }
};

/** `{speculative}` where the flags name one (flagSpeculative), else nothing. */
function specFlag(values: Record<string, string | boolean | undefined>): {speculative?: SpeculativeRequest} {
    const speculative = flagSpeculative(values);
    return speculative != null ? {speculative} : {};
}

function parseStrategy(value: string | boolean | undefined): StrategyName {
    const name = String(value ?? "optimal");
    if (!(STRATEGY_NAMES as readonly string[]).includes(name))
        throw new UsageError(`--strategy must be one of ${STRATEGY_NAMES.join(", ")} (got "${name}")`);
    return name as StrategyName;
}

/** `--timeout`: seconds the server may send nothing before a pull gives up (1 to 3600; default {@link DEFAULT_STALL_MS}). */
function flagStallSeconds(value: string | boolean | undefined): number {
    if (value == null) return DEFAULT_STALL_MS;
    const text = String(value);
    if (!/^[1-9][0-9]{0,3}$/.test(text) || Number(text) > 3600)
        throw new UsageError(`--timeout: the seconds to wait for the server must be an integer from 1 to 3600 (got "${text.slice(0, 40)}")`);
    return Number(text) * 1000;
}

function onePositional(positionals: string[], name: string): string {
    const [first, ...extra] = positionals;
    if (first == null)
        throw new UsageError(`<${name}> is required`);
    if (extra.length > 0)
        throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
    return first;
}



function help(io: CliIo): void {
    io.out("tensorwise: per-tensor CPU/GPU placement for local LLMs\n");
    for (const [name, command] of Object.entries(commands))
        io.out(`  ${name.padEnd(12)} ${command.summary}\n      ${command.usage}`);
}

/** The io of a run on the process's own streams (an interactive chat needs a terminal). */
const onTerminal = new WeakSet<CliIo>();

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[], rawIo: CliIo = processIo): Promise<number> {
    // Everything printed passes here: model names, metadata, tensor names, file errors and llama.cpp's log are
    // untrusted text, and none of it may move the cursor, retitle or clear the user's terminal.
    const io: CliIo = {out: (line) => rawIo.out(terminalSafe(line)), err: (line) => rawIo.err(terminalSafe(line))};
    if (rawIo === processIo)
        onTerminal.add(io);
    const [name, ...rest] = argv;
    if (name == null || name === "help" || name === "--help" || name === "-h") {
        help(io);
        return name == null ? 2 : 0;
    }
    const command = commands[name];
    if (command == null) {
        io.err(`unknown command "${name}"`);
        help(io);
        return 2;
    }
    if (rest.includes("--help") || rest.includes("-h")) {
        io.out(`${command.summary}\nusage: ${command.usage}`);
        return 0;
    }
    try {
        const {values, positionals} = parseArgs({args: rest, options: command.options, allowPositionals: true, strict: true});
        return await command.run(io, values as Record<string, string | boolean | undefined>, positionals);
    } catch (error) {
        if (error instanceof UsageError || (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))) {
            io.err(`error: ${error.message}\nusage: ${command.usage}`);
            return 2;
        }
        io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
        return 1;
    }
}
