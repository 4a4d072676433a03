import {spawn} from "node:child_process";

/** How a child process ended, with everything it printed. */
export type ProgramRun = {status: number | null; signal: NodeJS.Signals | null; error: Error | null; stdout: string; stderr: string};

/**
 * Runs `program` without blocking the event loop (a test worker must keep answering its runner while a model loads),
 * killing it with SIGKILL after `timeoutMs`. Never rejects: a failure to start is `error`.
 */
export function runProgram(program: string, args: readonly string[], options: {timeoutMs: number; env?: NodeJS.ProcessEnv}): Promise<ProgramRun> {
    return new Promise((resolve) => {
        const child = spawn(program, args, {env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"]});
        let stdout = "";
        let stderr = "";
        let error: Error | null = null;
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        const timer = setTimeout(() => {
            error = new Error(`timed out after ${Math.round(options.timeoutMs / 1000)} s`);
            child.kill("SIGKILL");
        }, options.timeoutMs);
        child.on("error", (cause) => (error = cause));
        child.on("close", (status, signal) => {
            clearTimeout(timer);
            resolve({status, signal, error, stdout, stderr});
        });
    });
}

/** `exit N`, `killed by SIGABRT`, or the reason it did not run. */
export function describeEnd(run: ProgramRun): string {
    return run.error != null ? run.error.message : run.signal != null ? `killed by ${run.signal}` : `exit ${run.status}`;
}
