// `tensorwise pull --list`: every quant of a repository planned on this machine from its header alone (fetched over
// HTTP Range from a local hub), before anything is downloaded. Needs the CPU engine; generates its models.
import {mkdtemp, readdir, readFile, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {startLocalHub, type LocalHub} from "../../engine/hub/testing/startLocalHub.js";
import {FIRST_HEADER_BYTES} from "../../engine/hub/fetchRemoteHeader.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import {main} from "../main.js";
import type {CliIo} from "../CliIo.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] pull --list plans: ${probe.reason}`);
await probe.engine?.llama.dispose();

function captureIo(): CliIo & {stdout: string[]; stderr: string[]} {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return {stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l)};
}

type Listing = {name: string; bytes: number; headerBytes: number; needsProfile: boolean; notPlanned: string | null;
    plan: {placement: string; ttftMs: number; tpotMs: number; requestMs: number; hostBytes: number} | null};

describe.skipIf(probe.reason != null)("tensorwise pull --list", () => {
    let work: string;
    let hub: LocalHub;
    let f16: Buffer;
    const savedEnv = {...process.env};

    beforeAll(async () => {
        work = await mkdtemp(path.join(os.tmpdir(), "tensorwise-pull-list-"));
        await makeSyntheticModel(path.join(work, "f16.gguf"), {preset: "tiny", layers: 4, embd: 256, ff: 768, type: "f16"});
        await makeSyntheticModel(path.join(work, "q8.gguf"), {preset: "tiny", layers: 4, embd: 256, ff: 768, type: "q8_0"});
        f16 = await readFile(path.join(work, "f16.gguf"));
        // a header that fails our validator: the GGUF version field says 99
        const broken = Buffer.from(f16);
        broken.writeUInt32LE(99, 4);
        hub = await startLocalHub({"org/tiny-GGUF": [
            {path: "tiny-F16.gguf", content: f16},
            {path: "tiny-Q8_0.gguf", content: await readFile(path.join(work, "q8.gguf"))},
            {path: "tiny-Q4_0.gguf", content: broken}
        ]});
        process.env.HF_ENDPOINT = hub.endpoint;
        process.env.TENSORWISE_DATA_DIR = path.join(work, "data");
        // a machine with no profile cached yet
        process.env.XDG_CACHE_HOME = path.join(work, "cache");
    });
    afterAll(async () => {
        process.env = {...savedEnv};
        await hub.close();
        await rm(work, {recursive: true, force: true});
    });

    const list = async (...flags: string[]): Promise<Listing[]> => {
        const io = captureIo();
        expect(await main(["pull", "org/tiny-GGUF", "--list", "--gpu", "cpu", "--json", ...flags], io), io.stderr.join("\n")).toBe(0);
        return (JSON.parse(io.stdout.join("\n")) as {quants: Listing[]}).quants;
    };

    it("says when no profile is cached, then with --profile plans each quant from its header as the full file would be planned", async () => {
        const unprofiled = await list();
        const byName = new Map(unprofiled.map((l) => [l.name, l]));
        expect([...byName.keys()].sort()).toEqual(["F16", "Q4_0", "Q8_0"]);
        for (const name of ["F16", "Q8_0"]) {
            expect(byName.get(name)!.plan).toBeNull();
            expect(byName.get(name)!.needsProfile).toBe(true);
            expect(byName.get(name)!.notPlanned).toMatch(/no cached profile .*\(add --profile/);
        }
        // the hostile header is refused by our validator, with its sentence
        expect(byName.get("Q4_0")!.notPlanned).toMatch(/the header fails validation: .*version/i);
        expect(byName.get("Q4_0")!.needsProfile).toBe(false);

        const text = captureIo();
        expect(await main(["pull", "org/tiny-GGUF", "--list", "--gpu", "cpu"], text)).toBe(0);
        expect(text.stdout.join("\n")).toContain("tensorwise pull org/tiny-GGUF --list --profile");

        const requestsBefore = hub.requests.length;
        const profiled = await list("--profile");
        const planned = profiled.filter((l) => l.plan != null);
        expect(planned.map((l) => l.name).sort()).toEqual(["F16", "Q8_0"]);
        // fastest first
        expect(planned.map((l) => l.plan!.requestMs)).toEqual([...planned.map((l) => l.plan!.requestMs)].sort((a, b) => a - b));
        expect(profiled.at(-1)!.name).toBe("Q4_0");
        // only the headers were fetched: one Range request per file, never the whole file
        const downloads = hub.requests.slice(requestsBefore).filter((r) => r.url.includes("/resolve/"));
        expect(downloads.map((r) => r.range)).toEqual(Array(3).fill(`bytes=0-${FIRST_HEADER_BYTES - 1}`));
        for (const r of downloads) expect(r.sentBytes).toBe(FIRST_HEADER_BYTES);
        expect(FIRST_HEADER_BYTES * 3).toBeLessThan(f16.length);
        // nothing downloaded as a model
        expect(await readdir(path.join(work, "data", "models")).catch(() => [])).toEqual([]);

        // the same plan as `tensorwise plan` on the whole file (same profile, now cached)
        const local = path.join(work, "f16.gguf");
        const planIo = captureIo();
        expect(await main(["plan", local, "--gpu", "cpu", "--json"], planIo)).toBe(0);
        const full = JSON.parse(planIo.stdout.join("\n")) as {prediction: {ttftMs: number; tpotMs: number}};
        const fromHeader = profiled.find((l) => l.name === "F16")!.plan!;
        expect(fromHeader.placement).toBe("CPU");
        expect(fromHeader.ttftMs).toBeCloseTo(full.prediction.ttftMs, 6);
        expect(fromHeader.tpotMs).toBeCloseTo(full.prediction.tpotMs, 6);
    }, 240_000);
});
