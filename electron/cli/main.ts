import {parseArgs, type ParseArgsConfig} from "node:util";
import {processIo, type CliIo} from "./CliIo.js";
import {devicesCommand} from "./commands/devicesCommand.js";
import type {EngineGpu} from "../engine/native/getEngineLlama.js";

type Command = {
    summary: string;
    usage: string;
    options: NonNullable<ParseArgsConfig["options"]>;
    run(io: CliIo, values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
};

const gpuOption = {gpu: {type: "string", default: "auto"}} as const;
const jsonOption = {json: {type: "boolean", default: false}} as const;

const commands: Record<string, Command> = {
    devices: {
        summary: "backends, devices, buffer types, free VRAM/RAM",
        usage: "tensorwise devices [--gpu auto|cpu|cuda|vulkan] [--json]",
        options: {...gpuOption, ...jsonOption},
        run: (io, values) => devicesCommand(io, {gpu: parseGpu(values.gpu), json: values.json === true})
    }
};

export function registerCommand(name: string, command: Command): void {
    commands[name] = command;
}

function parseGpu(value: string | boolean | undefined): EngineGpu {
    const gpu = String(value ?? "auto");
    if (gpu === "auto" || gpu === "cpu" || gpu === "cuda" || gpu === "vulkan" || gpu === "metal")
        return gpu;
    throw new UsageError(`--gpu must be auto, cpu, cuda, vulkan or metal (got "${gpu}")`);
}

/** A mistake in how the CLI was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}

function help(io: CliIo): void {
    io.out("tensorwise: per-tensor CPU/GPU placement for local LLMs\n");
    for (const [name, command] of Object.entries(commands))
        io.out(`  ${name.padEnd(12)} ${command.summary}\n      ${command.usage}`);
}

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
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
