/**
 * Starts the app in web mode exactly as `npm start` does without Electron (a separate Node process with the engine
 * child under it), on the Vulkan device, with a fresh data dir. Knows the engine child's pid, for the crash spec.
 */
import {spawn, type ChildProcess} from "node:child_process";
import path from "node:path";
import {isolatedCacheEnv} from "../../electron/engine/testing/isolatedCacheEnv.js";
import {repoRoot} from "./paths.js";
import {sharedCacheDir} from "./sharedCache.js";

export type WebApp = {
    url: string;
    dataDir: string;
    /** The pid of the current engine child (it changes after a restart). */
    enginePid(): Promise<number>;
    /** Everything the server printed, for failure reports. */
    output(): string;
    stop(): Promise<void>;
};

/**
 * `env`: added to the server's environment (HF_ENDPOINT for a local hub). `sharedCache`: use the run's shared cache
 * folder (sharedCache.ts: a machine profile another spec measured is reused) instead of one inside `dataDir`.
 */
export async function startWebApp(dataDir: string, extraArgs: readonly string[] = [], env: NodeJS.ProcessEnv = {},
    options: {sharedCache?: boolean} = {}): Promise<WebApp> {
    const child: ChildProcess = spawn(process.execPath, [path.join(repoRoot, "dist/electron/web/webMain.js"), "--data-dir", dataDir, ...extraArgs], {
        cwd: repoRoot,
        // the machine-profile cache inside the fresh data dir (or the run's shared one): the first Auto-offload measures,
        // later ones reuse (Mesa's compiled shaders stay shared: isolatedCacheEnv.ts)
        env: {...process.env, GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0", TENSORWISE_THREADS: process.env.TENSORWISE_THREADS ?? "2",
            ...isolatedCacheEnv(options.sharedCache === true ? sharedCacheDir() : path.join(dataDir, "cache")), ...env},
        stdio: ["ignore", "pipe", "pipe"]
    });
    let log = "";
    const enginePids: number[] = [];
    const pidWaiters: (() => void)[] = [];
    const onData = (chunk: Buffer) => {
        const text = chunk.toString();
        log += text;
        for (const match of text.matchAll(/engine started pid=(\d+)/g)) {
            enginePids.push(Number(match[1]));
            pidWaiters.splice(0).forEach((wake) => wake());
        }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);

    const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`web mode did not start:\n${log}`)), 30_000);
        const check = () => {
            const match = /Open (http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(log);
            if (match?.[1] != null) {
                clearTimeout(timer);
                resolve(match[1]);
            }
        };
        child.stdout?.on("data", check);
        child.once("exit", (code) => reject(new Error(`web mode exited with ${code}:\n${log}`)));
    });

    return {
        url,
        dataDir,
        async enginePid() {
            const seen = enginePids.length;
            if (seen === 0)
                await new Promise<void>((resolve) => pidWaiters.push(resolve));
            return enginePids.at(-1)!;
        },
        output: () => log,
        async stop() {
            if (child.exitCode != null)
                return;
            const exited = new Promise((resolve) => child.once("exit", resolve));
            child.kill("SIGTERM");
            const timer = setTimeout(() => child.kill("SIGKILL"), 8_000);
            await exited;
            clearTimeout(timer);
        }
    };
}
