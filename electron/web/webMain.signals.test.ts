import {spawn, type ChildProcess} from "node:child_process";
import {existsSync, readFileSync} from "node:fs";
import {mkdir, mkdtemp, readdir, rm} from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../engine/writer/makeSyntheticModel.js";

// Web mode as a user runs it, with real signals on real processes: the host (webMain.js) and its engine child.
const root = path.resolve(import.meta.dirname, "../..");
const webMain = path.join(root, "dist/electron/web/webMain.js");
const missing = requiredOrSkip("web mode signal tests", existsSync(webMain) ? null : `web mode is not built (${webMain}); run \`npm run build\``);

type Started = {host: ChildProcess; enginePid: number; dataDir: string; tmpDir: string; output: () => string; exited: Promise<{code: number | null; signal: NodeJS.Signals | null}>};

const started: Started[] = [];
const dirs: string[] = [];

/** Starts web mode in a process group of its own (as a terminal runs it) and waits for its URL and its engine's pid. */
async function startWebMode(): Promise<Started> {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-signals-"));
    dirs.push(dataDir);
    // the engine's temp folders (the server's KV files) go here, where the test can see what is left behind
    const tmpDir = path.join(dataDir, "tmp");
    await mkdir(tmpDir);
    const host = spawn(process.execPath, [webMain, "--data-dir", dataDir, "--port", "0"], {
        detached: true, stdio: ["ignore", "pipe", "pipe"], env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", TMPDIR: tmpDir}
    });
    let text = "";
    host.stdout!.on("data", (chunk: Buffer) => text += chunk.toString());
    host.stderr!.on("data", (chunk: Buffer) => text += chunk.toString());
    const exited = new Promise<{code: number | null; signal: NodeJS.Signals | null}>((resolve) =>
        host.once("exit", (code, signal) => resolve({code, signal})));
    const entry: Started = {host, enginePid: 0, dataDir, tmpDir, output: () => text, exited};
    started.push(entry);
    const deadline = Date.now() + 60_000;
    for (;;) {
        const pid = /engine started pid=(\d+)/.exec(text)?.[1];
        if (pid != null && text.includes("Open http://127.0.0.1:")) {
            entry.enginePid = Number(pid);
            return entry;
        }
        if (host.exitCode != null || Date.now() > deadline)
            throw new Error(`web mode did not start:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}

/** Whether `pid` is a live process (a zombie waiting for its parent counts as ended). */
function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch {
        return false;
    }
    try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
        return process.platform !== "linux";
    }
}

/** Calls contract requests of a running web mode the way its page does (event stream first, then the token header). */
async function webClient(web: Started): Promise<(name: string, arg: unknown) => Promise<unknown>> {
    const url = new URL(/Open (http:\/\/\S+)/.exec(web.output())![1]!);
    const token = new URLSearchParams(url.hash.slice(1)).get("token")!;
    const clientId = await new Promise<string>((resolve, reject) => {
        http.get({host: url.hostname, port: url.port, path: `/api/events?token=${token}`}, (response) => {
            response.on("data", (chunk: Buffer) => {
                const id = /"clientId":"([^"]+)"/.exec(chunk.toString())?.[1];
                if (id != null)
                    resolve(id);
            });
        }).on("error", reject);
    });
    return async (name, arg) => {
        const response = await fetch(`${url.origin}/api/request/${name}`, {
            method: "POST", body: JSON.stringify({arg}),
            headers: {"Authorization": `Bearer ${token}`, "Content-Type": "application/json", "X-Tensorwise-Client": clientId}
        });
        const reply = await response.json() as {ok: boolean; result?: unknown; error?: {message: string}};
        if (!reply.ok)
            throw new Error(`${name}: ${reply.error?.message}`);
        return reply.result;
    };
}

async function kvFolders(tmpDir: string): Promise<string[]> {
    return (await readdir(tmpDir)).filter((name) => name.startsWith("tensorwise-kv-"));
}

afterEach(async () => {
    for (const {host, enginePid} of started.splice(0)) {
        for (const pid of [host.pid, enginePid])
            if (pid != null && pid > 0 && alive(pid))
                process.kill(pid, "SIGKILL");
    }
    for (const dir of dirs.splice(0))
        await rm(dir, {recursive: true, force: true});
});

describe.skipIf(missing != null)("web mode and its engine child under signals", () => {
    it("Ctrl-C with a model loaded and the server on: the server's KV folder is removed before both exit", async () => {
        const web = await startWebMode();
        const model = path.join(web.dataDir, "models", "tiny.gguf");
        await mkdir(path.dirname(model), {recursive: true});
        await makeSyntheticModel(model, {preset: "tiny"});
        const request = await webClient(web);
        await request("model.load", {path: model, gpuLayers: 0, settings: {contextSize: 1024}, taskId: "load"});
        await request("server.set", {enabled: true, port: 0});
        await expect.poll(() => kvFolders(web.tmpDir), {timeout: 60_000}).toHaveLength(1);
        process.kill(-web.host.pid!, "SIGINT");
        expect(await web.exited).toEqual({code: 0, signal: null});
        await expect.poll(() => alive(web.enginePid), {timeout: 10_000}).toBe(false);
        expect(await kvFolders(web.tmpDir)).toEqual([]);
    }, 180_000);
});
