import {describeMachine} from "../../engine/hardware/describeMachine.js";
import {formatBytes, formatTable} from "../../engine/format/formatBytes.js";
import {getEngineLlama, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import type {CliIo} from "../CliIo.js";

/**
 * `tensorwise devices [--gpu auto|cpu|cuda|vulkan] [--rpc host:port,…] [--json]`: backends, devices (remote
 * rpc-servers' included), buffer types, VRAM/RAM.
 */
export async function devicesCommand(io: CliIo, options: {gpu: EngineGpu; json: boolean; rpc?: readonly string[]}): Promise<number> {
    const engine = await getEngineLlama({gpu: options.gpu, rpcServers: options.rpc});
    try {
        const machine = describeMachine(engine);
        if (options.json) {
            io.out(JSON.stringify(machine, null, 2));
            return 0;
        }
        io.out(`CPU: ${machine.cpu.model} (${machine.cpu.cores} math cores, ${machine.cpu.threads} threads)`);
        io.out(`RAM: ${formatBytes(machine.ram.freeBytes)} free of ${formatBytes(machine.ram.totalBytes)}`);
        io.out(`llama.cpp: ${machine.llamaCpp.repo} ${machine.llamaCpp.release}, ${machine.backend} build (${machine.buildType})`);
        io.out("");
        io.out(formatTable([
            ["device", "type", "backend", "free", "total", "buffer type", "host buffer type", "description"],
            ...machine.devices.map((device) => [
                device.name, device.type, device.backend ?? "—", formatBytes(device.freeBytes), formatBytes(device.totalBytes),
                device.bufferType ?? "—", device.hostBufferType ?? "—", device.description
            ])
        ]));
        io.out("");
        io.out("buffer types: " + machine.bufferTypes.map((bufferType) => `${bufferType.name}${bufferType.isHost ? " (host)" : ""}`).join(", "));
        return 0;
    } finally {
        await engine.llama.dispose();
    }
}
