/**
 * MCP over stdio to a server that runs in a process group of its own, for where mcpGuardian.ts cannot run (in Electron
 * the app's binary runs no Node): the server is started detached (its own session and group, so `npx` and whatever else
 * it starts are ended with it), and a small `/bin/sh` watchdog, detached as well, ends that group when the app is gone
 * — killed with SIGKILL included — or exits itself once the group is gone. A stop ends stdin, then SIGTERM to the
 * group, then SIGKILL. The messages are read and written with the SDK's own stdio framing, as its
 * StdioClientTransport does.
 *
 * POSIX only (process groups); McpConnection.ts uses the SDK's transport on Windows.
 */
import {spawn, type ChildProcess} from "node:child_process";
import {PassThrough} from "node:stream";
import {getDefaultEnvironment} from "@modelcontextprotocol/sdk/client/stdio.js";
import {ReadBuffer, serializeMessage} from "@modelcontextprotocol/sdk/shared/stdio.js";
import type {Transport} from "@modelcontextprotocol/sdk/shared/transport.js";
import type {JSONRPCMessage} from "@modelcontextprotocol/sdk/types.js";

/** How long the server has to exit after its stdin ends, and again after SIGTERM. */
const GRACE_MS = 1_500;

/**
 * The watchdog: `$1` the app's pid, `$2` the server's group. While the group has a process, checks every half second
 * that the app is there; when it is not, SIGTERM to the group, then SIGKILL. Only `kill`, `sleep` and `while`, so any
 * POSIX sh runs it (dash, bash, macOS's sh).
 */
const WATCHDOG = [
    "app=$1; group=$2",
    "while kill -0 \"-$group\" 2>/dev/null; do",
    "  if ! kill -0 \"$app\" 2>/dev/null; then",
    "    kill -TERM \"-$group\" 2>/dev/null; sleep 1.5; kill -KILL \"-$group\" 2>/dev/null; exit 0",
    "  fi",
    "  sleep 0.5",
    "done"
].join("\n");

export type GroupStdioParameters = {
    command: string;
    args: string[];
    /** Added to the SDK's small safe environment (PATH, HOME, …). */
    env: Record<string, string>;
    cwd: string | null;
    /** The most bytes of one message from the server. */
    maxBufferSize: number;
    /** The process whose death ends the server. Defaults to this one. */
    appPid?: number;
};

function signalGroup(group: number, signal: NodeJS.Signals): void {
    try {
        process.kill(-group, signal);
    } catch {
        // gone already
    }
}

export class GroupStdioTransport implements Transport {
    onclose?: () => void;
    onerror?: (error: Error) => void;
    onmessage?: <T extends JSONRPCMessage>(message: T) => void;
    /** The server's stderr, there before the start so that nothing it writes early is lost. */
    readonly stderr = new PassThrough();
    private child: ChildProcess | null = null;
    private group: number | null = null;
    private readonly readBuffer: ReadBuffer;

    constructor(private readonly parameters: GroupStdioParameters) {
        this.readBuffer = new ReadBuffer({maxBufferSize: parameters.maxBufferSize});
    }

    /** The server's pid (its group's id), once started. */
    get pid(): number | null {
        return this.child?.pid ?? null;
    }

    async start(): Promise<void> {
        if (this.child != null)
            throw new Error("GroupStdioTransport already started");
        const {command, args, env, cwd} = this.parameters;
        const child = spawn(command, args, {
            env: {...getDefaultEnvironment(), ...env}, ...(cwd != null && {cwd}), stdio: ["pipe", "pipe", "pipe"], detached: true, shell: false
        });
        this.child = child;
        await new Promise<void>((resolve, reject) => {
            child.once("error", (error) => {
                reject(error);
                this.onerror?.(error);
            });
            child.once("spawn", () => {
                this.group = child.pid!;
                this.watch(child.pid!);
                resolve();
            });
        });
        // the server's own exit ends what it started, as a stop would
        child.once("exit", () => this.endGroup());
        child.once("close", () => {
            if (this.child === child)
                this.child = null;
            this.onclose?.();
        });
        child.stdin!.on("error", (error) => this.onerror?.(error));
        child.stdout!.on("error", (error) => this.onerror?.(error));
        child.stderr!.pipe(this.stderr);
        child.stdout!.on("data", (chunk: Buffer) => {
            try {
                this.readBuffer.append(chunk);
            } catch (error) {
                this.onerror?.(error as Error);
                void this.close();
                return;
            }
            for (;;) {
                let message: JSONRPCMessage | null;
                try {
                    message = this.readBuffer.readMessage();
                } catch (error) {
                    this.onerror?.(error as Error);
                    continue;
                }
                if (message == null)
                    break;
                this.onmessage?.(message);
            }
        });
    }

    private watch(group: number): void {
        const app = this.parameters.appPid ?? process.pid;
        const watchdog = spawn("/bin/sh", ["-c", WATCHDOG, "tensorwise-mcp-watchdog", String(app), String(group)], {detached: true, stdio: "ignore"});
        watchdog.on("error", (error) => this.onerror?.(new Error(`the watchdog of the server's processes could not start: ${error.message}`)));
        watchdog.unref();
    }

    /** SIGTERM to the server's group, SIGKILL after {@link GRACE_MS}. */
    private endGroup(): void {
        const group = this.group;
        if (group == null)
            return;
        signalGroup(group, "SIGTERM");
        setTimeout(() => signalGroup(group, "SIGKILL"), GRACE_MS).unref();
    }

    async send(message: JSONRPCMessage): Promise<void> {
        const stdin = this.child?.stdin;
        if (stdin == null)
            throw new Error("Not connected");
        if (!stdin.write(serializeMessage(message)))
            await new Promise((resolve) => stdin.once("drain", resolve));
    }

    /** Ends stdin; then SIGTERM to the whole group; then SIGKILL. Resolves when the server has exited. */
    async close(): Promise<void> {
        const child = this.child;
        this.child = null;
        this.readBuffer.clear();
        if (child == null) {
            this.endGroup();
            return;
        }
        const closed = new Promise<void>((resolve) => {
            if (child.exitCode != null || child.signalCode != null)
                resolve();
            else
                child.once("exit", () => resolve());
        });
        const within = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
        try {
            child.stdin?.end();
        } catch {
            // closed already
        }
        if (!await within(GRACE_MS)) {
            this.endGroup();
            await within(GRACE_MS * 2);
        }
        this.endGroup();
    }
}
