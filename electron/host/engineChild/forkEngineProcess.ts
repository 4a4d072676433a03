/**
 * How {@link EngineClient} starts the engine process, as a small interface: Node's `child_process.fork` here (web mode,
 * CLI, tests), Electron's `utilityProcess.fork` in the app (electron/main/utilityEngineSpawner.ts), where forking the
 * Electron binary as Node would need the RunAsNode fuse. Imports nothing from `electron`.
 */
import {fork} from "node:child_process";
import type {EngineMessage} from "../../contract/engineProtocol.js";

/** A started engine process, as the host sees it. */
export interface EngineProcess {
    /** The OS process id once it has started. */
    readonly pid: number | undefined;
    /** Whether it has ended (an ended process accepts no messages). */
    readonly exited: boolean;
    readonly stdout: NodeJS.ReadableStream | null;
    readonly stderr: NodeJS.ReadableStream | null;
    /**
     * Sends one message (structured-clone semantics: bigints, Maps, typed arrays survive). Returns `false` when the
     * channel is closed; throws when the message cannot be cloned.
     */
    send(message: EngineMessage): boolean;
    onMessage(listener: (message: unknown) => void): void;
    /** Called once when it ends; `signal` only where the platform reports one (never for a utility process). */
    onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
    /** Called when it could not be started. */
    onError(listener: (error: Error) => void): void;
    /**
     * Sends `signal` (defaults to `SIGKILL`: ends it now, without cleaning up). `SIGTERM` asks the engine to dispose
     * and exit. A utility process has no signal choice: it is always ended at once.
     */
    kill(signal?: "SIGTERM" | "SIGKILL"): void;
}

/** Starts `entry` (the compiled engineMain.js) with `env`. */
export type EngineSpawner = (entry: string, options: {env: NodeJS.ProcessEnv}) => EngineProcess;

/**
 * Runs the engine with Node's `child_process.fork` and the V8 ("advanced") serialization, with stdout/stderr piped.
 * `execPath` picks the Node binary; defaults to this process's.
 */
export function forkEngineProcess(execPath?: string): EngineSpawner {
    return (entry, {env}) => {
        const child = fork(entry, [], {env, execPath, serialization: "advanced", stdio: ["ignore", "pipe", "pipe", "ipc"]});
        return {
            get pid() {
                return child.pid;
            },
            get exited() {
                return child.exitCode != null || child.signalCode != null;
            },
            stdout: child.stdout,
            stderr: child.stderr,
            send(message) {
                if (!child.connected)
                    return false;
                // a failed write ends in the child's exit, which the exit listener reports
                child.send(message, () => {});
                return true;
            },
            onMessage: (listener) => void child.on("message", listener),
            onExit: (listener) => void child.once("exit", listener),
            onError: (listener) => void child.on("error", listener),
            kill: (signal = "SIGKILL") => void child.kill(signal)
        };
    };
}
