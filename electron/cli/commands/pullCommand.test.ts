import {spawn} from "node:child_process";
import {createHash} from "node:crypto";
import {existsSync} from "node:fs";
import {mkdtemp, readdir, readFile, rm, stat} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {startLocalHub, type LocalHub} from "../../engine/hub/testing/startLocalHub.js";
import {PARTIAL_DIR} from "../../engine/hub/pullModel.js";
import {main} from "../main.js";
import type {CliIo} from "../CliIo.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const builtCli = path.join(root, "dist", "electron", "cli", "main.js");

function captureIo(): CliIo & {stdout: string[]; stderr: string[]; text(): string} {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return {stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), text: () => [...stdout, ...stderr].join("\n")};
}

const sha256 = (data: Buffer): string => createHash("sha256").update(data).digest("hex");

let work: string;
let model: Buffer;
let otherModel: Buffer;
let hub: LocalHub;
let dataDir: string;
const savedEnv = {...process.env};

beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), "tensorwise-pull-"));
    await makeSyntheticModel(path.join(work, "a.gguf"), {preset: "tiny", type: "f16"});
    await makeSyntheticModel(path.join(work, "b.gguf"), {preset: "tiny", type: "q8_0"});
    model = await readFile(path.join(work, "a.gguf"));
    otherModel = await readFile(path.join(work, "b.gguf"));
});
afterAll(async () => {
    await rm(work, {recursive: true, force: true});
});

beforeEach(async () => {
    dataDir = await mkdtemp(path.join(work, "data-"));
    hub = await startLocalHub({
        "org/tiny-GGUF": [
            {path: "tiny-F16.gguf", content: model},
            {path: "tiny-Q8_0.gguf", content: otherModel},
            {path: "README.md", content: Buffer.from("# tiny\n")}
        ],
        "org/bad-sha": [{path: "tiny-F16.gguf", content: model, listedSha256: sha256(otherModel)}],
        "org/huge": [{path: "huge-Q4_K_M.gguf", content: model, listedBytes: 2 ** 45}],
        "org/huge-split": [
            {path: "m-Q4_0-00001-of-00002.gguf", content: model},
            {path: "m-Q4_0-00002-of-00002.gguf", content: model, listedBytes: 2 ** 45}
        ],
        "org/missing-file": [{path: "gone-Q4_0.gguf", content: model, unserved: true}],
        "org/gated": [{path: "tiny-F16.gguf", content: model}]
    }, {gated: ["org/gated"]});
    process.env.HF_ENDPOINT = hub.endpoint;
    process.env.TENSORWISE_DATA_DIR = dataDir;
    delete process.env.HF_TOKEN;
});
afterEach(async () => {
    await hub.close();
    process.env = {...savedEnv};
});

const modelsDir = (): string => path.join(dataDir, "models");
/** The `.gguf` files in the models folder: a failed pull must leave none. */
const modelsInFolder = async (): Promise<string[]> => (await readdir(modelsDir()).catch(() => [] as string[])).filter((n) => n.endsWith(".gguf"));
const partials = async (): Promise<string[]> => await readdir(path.join(modelsDir(), PARTIAL_DIR)).catch(() => [] as string[]);
const downloads = (): typeof hub.requests => hub.requests.filter((r) => r.url.includes("/resolve/"));

describe("tensorwise pull", () => {
    it("downloads the named quant (any letter case), checks its sha256, and adds it to the app's model library", async () => {
        const io = captureIo();
        expect(await main(["pull", "org/tiny-GGUF:f16"], io)).toBe(0);
        const saved = path.join(modelsDir(), "tiny-F16.gguf");
        expect(sha256(await readFile(saved))).toBe(sha256(model));
        expect(io.stdout.join("\n")).toContain("sha256 verified");
        const library = JSON.parse(await readFile(path.join(dataDir, "recent-models.json"), "utf8")) as {models: {path: string; architecture: string}[]};
        expect(library.models.map((m) => m.path)).toEqual([saved]);
        expect(library.models[0]!.architecture).toBe("llama");
        expect(await partials()).toEqual([]);
        // the tree API and one plain download, nothing else fetched
        expect(downloads().map((r) => r.range)).toEqual([null]);
        expect(hub.requests[0]!.url).toBe("/api/models/org/tiny-GGUF/tree/main?recursive=true");

        // a second pull of the same file fetches nothing
        const again = captureIo();
        expect(await main(["pull", "org/tiny-GGUF:F16"], again)).toBe(0);
        expect(again.stdout.join("\n")).toContain("already here");
        expect(downloads()).toHaveLength(1);
    });

    it("without a quant, or with one the repository lacks, says which quants exist and downloads nothing", async () => {
        const none = captureIo();
        expect(await main(["pull", "org/tiny-GGUF"], none)).toBe(1);
        expect(none.text()).toMatch(/org\/tiny-GGUF has 2 quants; name one as org\/tiny-GGUF:QUANT: .*Q8_0 \(tiny-Q8_0\.gguf\).*F16 \(tiny-F16\.gguf\)/);
        const wrong = captureIo();
        expect(await main(["pull", "org/tiny-GGUF:Q4_K_M"], wrong)).toBe(1);
        expect(wrong.text()).toMatch(/has no quant Q4_K_M; it has: .*Q8_0.*F16/);
        expect(downloads()).toEqual([]);
        expect(await modelsInFolder()).toEqual([]);
    });

    it("deletes a download whose sha256 differs from the listed one, with a sentence and a non-zero exit", async () => {
        const io = captureIo();
        expect(await main(["pull", "org/bad-sha:F16"], io)).toBe(1);
        expect(io.text()).toMatch(/sha256 is [0-9a-f]{64}, not the [0-9a-f]{64} the repository lists; the download was deleted/);
        expect(await partials()).toEqual([]);
        expect(await modelsInFolder()).toEqual([]);
        expect(existsSync(path.join(dataDir, "recent-models.json"))).toBe(false);
    });

    it("refuses a file larger than the free disk before fetching a byte", async () => {
        const io = captureIo();
        expect(await main(["pull", "org/huge"], io)).toBe(1);
        expect(io.text()).toMatch(/not enough disk space in .*: it needs 32\.00 TiB more and .* is free/);
        // a split model: checked for all its parts before its first part is fetched
        const split = captureIo();
        expect(await main(["pull", "org/huge-split"], split)).toBe(1);
        expect(split.text()).toMatch(/m-Q4_0-00001-of-00002\.gguf: not enough disk space in .*: it needs 32\.00 TiB more/);
        expect(downloads()).toEqual([]);
        expect(await partials()).toEqual([]);
        expect(await modelsInFolder()).toEqual([]);
    });

    it("says what was not found: an unknown repository, and a listed file the server does not have", async () => {
        const repo = captureIo();
        expect(await main(["pull", "org/nothing-here"], repo)).toBe(1);
        expect(repo.text()).toContain(`error: ${hub.endpoint} has no model repository org/nothing-here (or it is private: set HF_TOKEN).`);
        const revision = captureIo();
        expect(await main(["pull", "org/tiny-GGUF:F16", "--revision", "v9"], revision)).toBe(1);
        expect(revision.text()).toContain('error: org/tiny-GGUF has no revision "v9" (no branch, tag or commit of that name).');
        const file = captureIo();
        hub.behaviour = {};
        expect(await main(["pull", "org/missing-file", "--revision", "v2"], file)).toBe(1);
        expect(file.text()).toMatch(/not found \(HTTP 404\)/);
        expect(await modelsInFolder()).toEqual([]);
    });

    it("gives up on a server that stops sending, with a sentence, keeping the partial for a resume", async () => {
        hub.behaviour = {stallAfterBytes: 100_000};
        const io = captureIo();
        const started = performance.now();
        expect(await main(["pull", "org/tiny-GGUF:F16", "--timeout", "1"], io)).toBe(1);
        expect(performance.now() - started).toBeLessThan(10_000);
        expect(io.text()).toMatch(/the server sent nothing for 1 s, so tensorwise gave up \(run the same command again to resume\)/);
        expect(await modelsInFolder()).toEqual([]);
        const [partial] = await partials();
        expect((await stat(path.join(modelsDir(), PARTIAL_DIR, partial!))).size).toBe(100_000);
        hub.behaviour = {};
        expect(await main(["pull", "org/tiny-GGUF:F16"], captureIo())).toBe(0);
        expect(downloads().at(-1)!.range).toBe("bytes=100000-");
        expect(sha256(await readFile(path.join(modelsDir(), "tiny-F16.gguf")))).toBe(sha256(model));
    });

    it("sends HF_TOKEN to a gated repository, and says to set it when it is missing", async () => {
        hub.behaviour = {token: "hf_secret"};
        const refused = captureIo();
        expect(await main(["pull", "org/gated"], refused)).toBe(1);
        expect(refused.text()).toMatch(/the repository is gated or private: set HF_TOKEN/);
        process.env.HF_TOKEN = "hf_secret";
        expect(await main(["pull", "org/gated"], captureIo())).toBe(0);
        expect(hub.requests.at(-1)!.authorization).toBe("Bearer hf_secret");
        // a URL on another origin than HF_ENDPOINT never receives the token
        const otherOrigin = hub.endpoint.replace("127.0.0.1", "localhost");
        expect(await main(["pull", `${otherOrigin}/org/tiny-GGUF/resolve/main/tiny-Q8_0.gguf`], captureIo())).toBe(0);
        expect(hub.requests.slice(-2).map((r) => r.authorization)).toEqual([null, null]);
    });

    it("refuses a bad target, revision or timeout by name", async () => {
        for (const [args, message] of [
            [["pull", "../../etc"], /is not a model: give owner\/name/],
            [["pull", "org/x:Q4 K"], /is not a quant name/],
            [["pull", "org/x", "--revision", "../main"], /is not a revision name/],
            [["pull", "ftp://example.com/org/x"], /is not a model: give owner\/name/],
            [["pull", `${"http://127.0.0.1:1"}/org/x/tree/main/a.gguf`], /is not a model URL/],
            [["pull", "org/x", "--timeout", "0"], /--timeout: .* from 1 to 3600/],
            [["pull", "org/x", "--profile"], /--profile only applies to --list/]
        ] as const) {
            const io = captureIo();
            expect(await main([...args], io)).toBeGreaterThan(0);
            expect(io.text()).toMatch(message);
        }
        process.env.HF_ENDPOINT = "file:///etc";
        const io = captureIo();
        expect(await main(["pull", "org/x"], io)).toBe(1);
        expect(io.text()).toMatch(/HF_ENDPOINT must be a plain http:\/\/ or https:\/\/ address/);
        expect(hub.requests).toEqual([]);
    });
});

describe.skipIf(!existsSync(builtCli))("tensorwise pull, interrupted (the built CLI in a child process)", () => {
    /** Runs the built CLI; resolves with its exit code and stderr once the partial holds `killAt` bytes and `signal` was sent. */
    function interruptedPull(signal: NodeJS.Signals, killAt: number): Promise<{code: number | null; stderr: string; partialBytes: number}> {
        const child = spawn(process.execPath, [path.join(root, "bin", "tensorwise.mjs"), "pull", "org/tiny-GGUF:F16"], {
            env: {...process.env}, stdio: ["ignore", "pipe", "pipe"]
        });
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        return new Promise((resolve, reject) => {
            let partialBytes = 0;
            const poll = setInterval(() => {
                void (async () => {
                    const [name] = await partials();
                    if (name == null) return;
                    partialBytes = (await stat(path.join(modelsDir(), PARTIAL_DIR, name))).size;
                    if (partialBytes >= killAt && child.exitCode == null && !child.killed) {
                        clearInterval(poll);
                        child.kill(signal);
                    }
                })().catch(reject);
            }, 20);
            child.on("exit", (code) => {
                clearInterval(poll);
                void partials().then(async ([name]) => resolve({
                    code, stderr, partialBytes: name == null ? 0 : (await stat(path.join(modelsDir(), PARTIAL_DIR, name))).size
                }));
            });
        });
    }

    it("Ctrl-C and a kill both keep the partial; the next run fetches only the rest (HTTP Range) and verifies the whole", async () => {
        // a slow link: 16 KiB every 25 ms, about 2 s for the model
        hub.behaviour = {throttle: {chunkBytes: 16 * 1024, delayMs: 25}};
        const interrupted = await interruptedPull("SIGINT", 200 * 1024);
        expect(interrupted.code).toBe(130);
        expect(interrupted.stderr).toContain("cancelled: what was downloaded is kept; run the same command again to resume.");
        expect(interrupted.partialBytes).toBeGreaterThanOrEqual(200 * 1024);
        expect(interrupted.partialBytes).toBeLessThan(model.length);
        expect(await modelsInFolder()).toEqual([]);

        const killed = await interruptedPull("SIGKILL", interrupted.partialBytes + 200 * 1024);
        expect(killed.code).toBe(null);
        expect(killed.partialBytes).toBeLessThan(model.length);
        expect(await modelsInFolder()).toEqual([]);

        hub.behaviour = {};
        const io = captureIo();
        expect(await main(["pull", "org/tiny-GGUF:F16"], io)).toBe(0);
        const ranges = downloads().map((r) => r.range);
        expect(ranges).toEqual([null, `bytes=${interrupted.partialBytes}-`, `bytes=${killed.partialBytes}-`]);
        expect(downloads().at(-1)!.sentBytes).toBe(model.length - killed.partialBytes);
        expect(sha256(await readFile(path.join(modelsDir(), "tiny-F16.gguf")))).toBe(sha256(model));
        expect(io.stdout.join("\n")).toContain("resumed at");
        expect(await partials()).toEqual([]);
    }, 60_000);
});
