import type {Budget, LoadedModelState} from "../../contract/ipc.js";
import type {RuntimeSettings} from "../../contract/settings.js";
import {formatBytes, formatMs} from "../../engine/format/formatBytes.js";
import {terminalSafe} from "../../engine/format/terminalSafe.js";
import {LlamaLogLevel, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import {EngineService} from "../../engineProcess/EngineService.js";
import {UsageError} from "../UsageError.js";
import {progressLines, type CliIo} from "../CliIo.js";
import {loadFromFlags} from "../loadFromFlags.js";
import {memoryLines} from "../memoryLines.js";
import type {SpeculativeRequest} from "../../contract/speculative.js";
import {speculativeLine} from "../speculativeLines.js";

export type ChatCommandOptions = {
    gpu: EngineGpu;
    /** One prompt; without it, an interactive conversation on the terminal. */
    prompt?: string;
    placement?: string;
    gpuLayers?: number;
    auto: boolean;
    budget?: Budget;
    /** Defaults to 2048 tokens, or the model's trained context where that is smaller (defaultContextSize). */
    contextSize?: number;
    batchSize: number;
    threads?: number;
    /** llama.cpp knobs the user fixed (flagKnobs); the rest is the planner's (with --auto) or llama.cpp's default. */
    knobs?: Partial<RuntimeSettings>;
    maxTokens: number;
    temperature: number;
    showOverrides: boolean;
    json: boolean;
    /** rpc-servers (`host:port`) whose devices join this machine's. Defaults to none. */
    rpc?: readonly string[];
    /** Speculative decoding (`--spec`, `--model-draft`, `--spec-draft-n-max`); absent: none. */
    speculative?: SpeculativeRequest;
};

/**
 * `tensorwise chat <gguf> --prompt <text> [--placement file.json | --gpu-layers N | --auto [--budget]]`: loads the
 * model with the placement, replies, and prints TTFT, TPOT and measured memory per buffer type against the plan.
 */
export async function chatCommand(io: CliIo, modelPath: string, options: ChatCommandOptions): Promise<number> {
    const chosen = [options.placement != null, options.gpuLayers != null, options.auto].filter(Boolean).length;
    if (chosen > 1)
        throw new UsageError("give at most one of --placement, --gpu-layers and --auto");
    const overrideLines: string[] = [];
    const printProgress = progressLines(io);
    const service = await EngineService.create({
        gpu: options.gpu,
        maxThreads: options.threads,
        rpcServers: options.rpc,
        logLevel: options.showOverrides ? LlamaLogLevel.debug : LlamaLogLevel.warn,
        onLog: (level, message) => {
            if (message.includes("buffer type overridden"))
                overrideLines.push(message.trim());
            else if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal)
                io.err(`llama.cpp: ${message.trim()}`);
        },
        onProgress: (progress) => {
            if (!options.json && progress.step !== "load")
                printProgress(`${progress.step}: ${progress.detail ?? ""}`);
        }
    });
    try {
        const state = await loadFromFlags(service, modelPath, options, "cli");

        if (options.prompt == null)
            return await interactiveChat(io, service, state, options);

        let streamed = "";
        const reply = await service.chat(
            {streamId: "cli", history: [], message: options.prompt, maxTokens: options.maxTokens, temperature: options.temperature, withTokenIds: options.json},
            (text) => {
                streamed += text;
                if (!options.json)
                    process.stdout.write(terminalSafe(text));
            }
        );
        if (options.json) {
            io.out(JSON.stringify({
                reply: reply.text, tokens: reply.tokenIds, stopReason: reply.stopReason, timing: reply.timing, settings: state.settings,
                placement: state.placement, measured: state.measured,
                plannedVsMeasured: state.memory, overrideLog: overrideLines, loadMs: state.loadMs,
                speculative: state.speculative == null ? null : {...state.speculative, reply: reply.speculative ?? null}
            }, null, 2));
            return 0;
        }
        if (!streamed.endsWith("\n"))
            io.out("");
        io.out("");
        io.out(`placement: ${state.placement.strategy}, ${state.placement.overrides.length} override pattern(s); llama.cpp equivalent:`);
        io.out(`  ${state.placement.llamaCppFlags}`);
        io.out(`TTFT ${formatMs(reply.timing.ttftMs)} (${reply.timing.promptTokens} prompt tokens), TPOT ${formatMs(reply.timing.tpotMs)}` +
            ` (${reply.timing.generatedTokens} tokens${reply.timing.tpotMs != null ? `, ${(1000 / reply.timing.tpotMs).toFixed(1)} tok/s` : ""}), load ${formatMs(state.loadMs)}`);
        if (state.speculative != null)
            io.out(speculativeLine(state.speculative, reply.speculative ?? null));
        io.out("");
        for (const line of memoryLines(state.memory))
            io.out(line);
        for (const line of overrideLines)
            io.out(`  llama.cpp: ${line}`);
        return 0;
    } finally {
        await service.dispose();
    }
}

/** A conversation on the terminal: one reply per line typed, with its TTFT/TPOT; `/exit` or Ctrl-D ends it. */
async function interactiveChat(io: CliIo, service: EngineService, state: LoadedModelState, options: ChatCommandOptions): Promise<number> {
    const {createInterface} = await import("node:readline/promises");
    const weights = state.memory.devices.map((device) => `${device.name} ${formatBytes(device.measured.weightsBytes)}`).join(", ");
    io.out(`loaded ${state.card.fileName} (${state.placement.strategy}), weights in ${weights}. Type a message; /exit to quit.`);
    const history: {role: "user" | "assistant"; text: string}[] = [];
    const terminal = createInterface({input: process.stdin, output: process.stdout});
    const controller = {current: null as AbortController | null};
    terminal.on("SIGINT", () => {
        if (controller.current != null)
            service.stop("cli");
        else
            terminal.close();
    });
    try {
        for (;;) {
            let message: string;
            try {
                message = (await terminal.question("> ")).trim();
            } catch {
                break; // closed (Ctrl-D / Ctrl-C at the prompt)
            }
            if (message === "/exit" || message === "/quit")
                break;
            if (message === "")
                continue;
            controller.current = new AbortController();
            const reply = await service.chat(
                {streamId: "cli", history, message, maxTokens: options.maxTokens, temperature: options.temperature || 0.7},
                (text) => process.stdout.write(terminalSafe(text))
            );
            controller.current = null;
            history.push({role: "user", text: message}, {role: "assistant", text: reply.text});
            const spec = reply.speculative != null ? `, ${reply.speculative.accepted}/${reply.speculative.drafted} drafted tokens accepted` : "";
            io.out(`\n[TTFT ${formatMs(reply.timing.ttftMs)}, TPOT ${formatMs(reply.timing.tpotMs)}, ${reply.timing.generatedTokens} tokens${spec}${reply.aborted ? ", stopped" : ""}]`);
        }
    } finally {
        terminal.close();
    }
    return 0;
}
