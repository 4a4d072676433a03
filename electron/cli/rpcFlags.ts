/** Command-line flags of the RPC features: `--rpc host:port,…`, and rpc-server's `--host`, `--port`, `--device`. */
import {MAX_RPC_SERVERS, parseRpcEndpoint} from "../engine/rpc/parseRpcEndpoint.js";
import type {FlagValue} from "./flags.js";
import {UsageError} from "./UsageError.js";


/** `--rpc 127.0.0.1:50052,10.0.0.2:50052` → the addresses, checked; `[]` when absent. */
export function flagRpc(value: FlagValue): string[] {
    if (value == null || value === false)
        return [];
    const items = String(value).split(",").map((item) => item.trim()).filter((item) => item !== "");
    if (items.length === 0 || items.length > MAX_RPC_SERVERS)
        throw new UsageError(`--rpc must list 1 to ${MAX_RPC_SERVERS} rpc-servers as host:port, separated by commas`);
    try {
        return [...new Set(items.map((item) => parseRpcEndpoint(item).text))];
    } catch (error) {
        throw new UsageError(`--rpc: ${(error as Error).message}`);
    }
}

/** `--port N`: 1–65535. */
export function flagPort(value: FlagValue): number {
    const text = String(value ?? "");
    const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
    if (!(port >= 1 && port <= 65535))
        throw new UsageError(`--port must be a TCP port from 1 to 65535 (got "${text.slice(0, 20)}")`);
    return port;
}

/** `--host`: an IP address or host name (what rpc-server binds to). */
export function flagRpcHost(value: FlagValue): string {
    const host = String(value ?? "");
    if (!/^[A-Za-z0-9.:-]{1,253}$/.test(host))
        throw new UsageError(`--host must be an IP address or host name, e.g. 127.0.0.1 (got "${host.slice(0, 40)}")`);
    return host;
}

/** `--device`: ggml device names as rpc-server takes them (`CPU`, `Vulkan0`, `CUDA0,CUDA1`). */
export function flagRpcDevice(value: string): string {
    if (!/^[A-Za-z0-9_]{1,32}(,[A-Za-z0-9_]{1,32}){0,15}$/.test(value))
        throw new UsageError(`--device must name devices as \`tensorwise devices\` lists them, e.g. CPU or Vulkan0 (got "${value.slice(0, 40)}")`);
    return value;
}

/** Largest `--max-message-mib`: 64 GiB, beyond any single tensor of a model a machine can hold. */
const MAX_MESSAGE_MIB = 65_536;

/**
 * `--max-message-mib N`: the largest request the rpc-server's front accepts, in MiB (RPC_MAX_MESSAGE_BYTES in
 * electron/engine/rpc/RpcFront.ts explains the default); returned in bytes, `undefined` when absent.
 */
export function flagMaxMessageMib(value: FlagValue): number | undefined {
    if (value == null || value === false)
        return undefined;
    const text = String(value);
    const mib = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
    if (!(mib >= 1 && mib <= MAX_MESSAGE_MIB))
        throw new UsageError(`--max-message-mib must be a whole number of MiB from 1 to ${MAX_MESSAGE_MIB} (got "${text.slice(0, 20)}")`);
    return mib * 2 ** 20;
}
