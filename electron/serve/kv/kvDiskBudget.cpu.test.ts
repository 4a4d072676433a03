/**
 * Swapped-out KV state files on a real disk (a temp folder of this test), on a generated model with one sequence:
 * they stay within the disk budget (the least recently used files are dropped, those conversations recomputed), a save
 * or load that fails recomputes instead of answering 500, and a start removes the state folders of dead processes.
 */
import {spawnSync} from "node:child_process";
import {mkdir, mkdtemp, readdir, rm, stat} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import {makeTestModel} from "../../engine/testing/testModels.js";
import type {KvCostModel} from "./KvCostModel.js";
import type {KvTimings} from "../protocols/openai/replyBodies.js";
import {fifoPolicy} from "../scheduling/schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer} from "../serveOpenAi.js";
import type {KvDiskBudget} from "./kvStateFolder.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] KV disk budget tests: ${probe.reason}`);

/** Swap always predicted cheaper: any recompute below is the disk's doing. */
const swapCheap: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-9}, load: {fixedMs: 0, msPer: 1e-9},
    prefill: {fixedMs: 100, msPer: 10}, source: "given (swap cheap)"
};
const MAX_TOKENS = 8;

type Reply = {text: string; kv: KvTimings};

describe.skipIf(probe.reason != null)("KV state files on disk (CPU, generated model, 1 sequence)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;
    let dir: string;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("kv-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
    });
    afterAll(async () => {
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    async function withServer(diskBudget: KvDiskBudget | undefined, use: (chat: (id: string, text: string) => Promise<Reply>, server: OpenAiServer, folder: () => Promise<string>) => Promise<void>,
        costModel = swapCheap): Promise<void> {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-kv-disk-test-"));
        const server = await serveOpenAi({placed, modelId: "kv-tiny", queueLength: 4, requestTimeoutMs: 60_000, policy: fifoPolicy,
            kv: {costModel, dir, diskBudget}});
        const client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
        const chat = async (id: string, text: string): Promise<Reply> => {
            const reply = await client.chat.completions.create({model: "kv-tiny", messages: [{role: "user", content: text}], max_tokens: MAX_TOKENS, temperature: 0},
                {headers: {"X-Conversation-Id": id}});
            return {text: reply.choices[0]!.message.content ?? "", kv: (reply as unknown as {timings: {kv: KvTimings}}).timings.kv};
        };
        const folder = async () => path.join(dir, (await readdir(dir)).find((name) => name.startsWith(`tensorwise-kv-${process.pid}-`))!);
        try {
            await use(chat, server, folder);
        } finally {
            await server.close();
            await rm(dir, {recursive: true, force: true});
        }
    }

    /** Bytes of every file in `folder`. */
    async function folderBytes(folder: string): Promise<number> {
        const names = await readdir(folder);
        return (await Promise.all(names.map(async (name) => (await stat(path.join(folder, name))).size))).reduce((sum, size) => sum + size, 0);
    }

    it("a budget of 0 never writes a state file: a conversation that would be swapped is recomputed, with the same reply", async () => {
        let unbudgeted = "";
        await withServer(undefined, async (chat) => {
            await chat("a", "Tell me about the river");
            await chat("b", "Count the bridges");
            const back = await chat("a", "Tell me about the river");
            expect(back.kv).toMatchObject({path: "swap", fallback: null});
            unbudgeted = back.text;
        });
        await withServer({kind: "mib", mib: 0}, async (chat, server, folder) => {
            await chat("a", "Tell me about the river");
            await chat("b", "Count the bridges");
            expect(await readdir(await folder())).toEqual([]);
            const back = await chat("a", "Tell me about the river");
            expect(back.kv).toMatchObject({path: "recompute", fallback: "disk-budget", predicted: {swap_ms: expect.any(Number)}});
            expect(back.text).toBe(unbudgeted);
            expect(server.kv.stateFileBytes).toBe(0);
        });
    });

    it("keeps the files within the budget by dropping the least recently used: that conversation comes back by recompute", async () => {
        // measure one state file (and so predict them exactly), then allow one and a half of them
        let oneFile = 0;
        let bytesPerToken = 0;
        await withServer(undefined, async (chat) => {
            await chat("a", "Tell me about the river");
            await chat("b", "Count the bridges");
            const back = await chat("a", "Tell me about the river");
            oneFile = back.kv.state_bytes!;
            bytesPerToken = oneFile / back.kv.tokens!;
        });
        expect(oneFile).toBeGreaterThan(0);
        await withServer({kind: "mib", mib: oneFile * 1.5 / 1024 / 1024}, async (chat, server, folder) => {
            await chat("a", "Tell me about the river");
            await chat("b", "Count the bridges");
            await chat("c", "Name the colours of the sky");
            // a's file made room for b's; only one file is on disk
            expect(await readdir(await folder())).toHaveLength(1);
            expect(await folderBytes(await folder())).toBeLessThanOrEqual(server.kv.diskBudgetBytes);
            expect((await chat("a", "Tell me about the river")).kv).toMatchObject({path: "recompute", fallback: "disk-budget"});
            // a pushed c out: c's file took the place of b's, the least recently used; and c's file is read back even
            // though saving a's (pushed out by c) needs its room
            expect((await chat("c", "Name the colours of the sky")).kv).toMatchObject({path: "swap", fallback: null});
            expect((await chat("b", "Count the bridges")).kv).toMatchObject({path: "recompute", fallback: "disk-budget"});
            expect(await readdir(await folder())).toHaveLength(1);
        }, {...swapCheap, stateBytes: {headerBytes: 0, bytesPerToken}});
    });

    it("a state file that cannot be written or read (the folder gone, as on a full disk) is recomputed, never a 500", async () => {
        let expected = "";
        await withServer(undefined, async (chat) => {
            await chat("a", "Tell me about the river");
            expected = (await chat("a", "Tell me about the river")).text;
        });
        await withServer(undefined, async (chat, _server, folder) => {
            await chat("a", "Tell me about the river");
            await rm(await folder(), {recursive: true, force: true});
            // saving a's state fails: b is still answered
            expect((await chat("b", "Count the bridges")).text.length).toBeGreaterThan(0);
            const back = await chat("a", "Tell me about the river");
            expect(back.kv).toMatchObject({path: "recompute", fallback: "disk-error"});
            expect(back.text).toBe(expected);
        });
        await withServer(undefined, async (chat, _server, folder) => {
            await chat("a", "Tell me about the river");
            await chat("b", "Count the bridges");
            // a's state file was written; it disappears before a comes back
            const files = await readdir(await folder());
            expect(files).toHaveLength(1);
            await rm(path.join(await folder(), files[0]!));
            const back = await chat("a", "Tell me about the river");
            expect(back.kv).toMatchObject({path: "recompute", fallback: "disk-error"});
            expect(back.text).toBe(expected);
        });
    });

    it("removes the state folders of processes that no longer run at start, and keeps those of live ones", async () => {
        const base = await mkdtemp(path.join(os.tmpdir(), "tensorwise-kv-stale-test-"));
        try {
            const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid!;
            await mkdir(path.join(base, `tensorwise-kv-${dead}-AbC123`));
            await mkdir(path.join(base, `tensorwise-kv-${dead}-calibrate-XyZ789`));
            await mkdir(path.join(base, `tensorwise-kv-${process.pid}-live01`));
            await mkdir(path.join(base, "tensorwise-kv-notapid"));
            await mkdir(path.join(base, "someone-elses-folder"));
            const server = await serveOpenAi({placed, modelId: "kv-tiny", queueLength: 1, requestTimeoutMs: 60_000, policy: fifoPolicy,
                kv: {costModel: swapCheap, dir: base}});
            const during = (await readdir(base)).sort();
            await server.close();
            expect(during.filter((name) => name.includes(`-${dead}-`))).toEqual([]);
            expect(during).toEqual(expect.arrayContaining([`tensorwise-kv-${process.pid}-live01`, "tensorwise-kv-notapid", "someone-elses-folder"]));
            // its own folder is gone again after close
            expect((await readdir(base)).sort()).toEqual([`tensorwise-kv-${process.pid}-live01`, "someone-elses-folder", "tensorwise-kv-notapid"].sort());
        } finally {
            await rm(base, {recursive: true, force: true});
        }
    });
});
