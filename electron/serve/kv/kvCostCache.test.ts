/**
 * The KV cost cache's trust boundary, without a model: a calibration written is read back as the same cost model; a
 * file of any other shape (not JSON, another format or key, missing or extra points, numbers of the wrong type or
 * sign, points at other lengths, a cost model edited apart from its points) is ignored with its reason, never used;
 * the file is private (0600 in a 0700 folder); and every fact the key is made of changes the key.
 */
import {mkdtemp, readFile, rm, stat, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {calibrationMethod, fitKvCostModel, KV_COST_FORMAT, type KvCalibration} from "./calibrateKvCost.js";
import {
    checkCachedKvCost, kvCostCacheKey, readCachedKvCost, writeCachedKvCost, type KvCostCacheEntry, type KvCostCacheFacts
} from "./kvCostCache.js";

const facts: KvCostCacheFacts = {
    machine: {host: "h", cpu: "c", ramBytes: 1, driver: "", llamaCppRelease: "b1", buildType: "localBuild", backend: "cpu", devices: ["CPU:c:1"]},
    model: {path: "/models/a.gguf", bytes: "1000", mtimeNs: "1700000000000000000"},
    load: {contextSize: 1024, batchSize: 512, threads: 2, useMmap: true, useGpu: true, gpuLayers: 0, overrides: [], opOffload: true, kvOffload: true,
        flashAttention: false, kvCacheType: "f16", sequences: 2},
    method: calibrationMethod(undefined)
};
const points = [
    {tokens: 32, stateBytes: 70_000, prefillMs: 4, saveMs: 0.5, loadMs: 0.4},
    {tokens: 128, stateBytes: 270_000, prefillMs: 15, saveMs: 1.1, loadMs: 0.9},
    {tokens: 256, stateBytes: 530_000, prefillMs: 31, saveMs: 2.0, loadMs: 1.7}
];
const calibration: KvCalibration = {points, model: fitKvCostModel(points)};

let dir: string;
let entry: KvCostCacheEntry;
beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-kv-cost-cache-"));
    const key = kvCostCacheKey(facts);
    entry = {file: path.join(dir, "cache", `kv-cost-${key}.json`), key, facts, lengths: [32, 128, 256]};
});
afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

describe("the KV cost cache", () => {
    it("reads back what it wrote, as the same cost model, in a private file", async () => {
        expect(await readCachedKvCost(entry)).toBeNull();
        await writeCachedKvCost(entry, calibration);
        expect(await readCachedKvCost(entry)).toEqual({calibration});
        expect((await stat(entry.file)).mode & 0o777).toBe(0o600);
        expect((await stat(path.dirname(entry.file))).mode & 0o777).toBe(0o700);
    });

    it("ignores, with the reason, a file that is not JSON, one larger than any calibration, and one of another key (another model, setting or machine)", async () => {
        const kept = await readFile(entry.file, "utf8");
        await writeFile(entry.file, kept.slice(0, kept.length / 2));
        expect(await readCachedKvCost(entry)).toEqual({ignored: "it is not JSON"});
        await writeFile(entry.file, kept);
        await writeFile(entry.file, kept + " ".repeat(1024 * 1024));
        expect(await readCachedKvCost(entry)).toEqual({ignored: expect.stringMatching(/^it is \d+ bytes, more than a calibration takes/)});
        await writeFile(entry.file, kept);
        expect(await readCachedKvCost({...entry, key: kvCostCacheKey({...facts, load: {...facts.load, contextSize: 2048}})}))
            .toEqual({ignored: "it was measured for another model, setting or machine (its key differs)"});
    });

    // every shape that must not be trusted, each next to a valid body that only it changes
    const valid = () => JSON.parse(JSON.stringify({format: KV_COST_FORMAT, key: entry.key, points, model: calibration.model})) as {
        format: unknown; key: unknown; points: Record<string, unknown>[]; model: {save: Record<string, unknown>; source: unknown}
    };
    const cases: [string, (body: ReturnType<typeof valid>) => unknown, RegExp][] = [
        ["null", () => null, /not a JSON object/],
        ["a list", (body) => [body], /not a JSON object/],
        ["a string", () => "kv", /not a JSON object/],
        ["an older format", (body) => ({...body, format: KV_COST_FORMAT - 1}), /its format is/],
        ["the format as a string", (body) => ({...body, format: String(KV_COST_FORMAT)}), /its format is/],
        ["no key", (body) => ({...body, key: undefined}), /key differs/],
        ["a key of the right length, wrong", (body) => ({...body, key: "0".repeat(entry.key.length)}), /key differs/],
        ["no points", (body) => ({...body, points: undefined}), /does not hold 3 measured points/],
        ["two points", (body) => ({...body, points: body.points.slice(0, 2)}), /does not hold 3/],
        ["four points", (body) => ({...body, points: [...body.points, body.points[2]]}), /does not hold 3/],
        ["points as an object of the right length", (body) => ({...body, points: {length: 3, 0: body.points[0]}}), /does not hold 3/],
        ["a point that is null", (body) => ({...body, points: [null, ...body.points.slice(1)]}), /point 1 is not an object/],
        ["a number as a string", (body) => ({...body, points: [{...body.points[0], prefillMs: "4"}, ...body.points.slice(1)]}), /point 1's prefillMs/],
        ["a negative time", (body) => ({...body, points: [body.points[0], {...body.points[1], saveMs: -1}, body.points[2]]}), /point 2's saveMs/],
        ["a missing size", (body) => ({...body, points: [body.points[0], body.points[1], {...body.points[2], stateBytes: undefined}]}), /point 3's stateBytes/],
        ["an overflowing number (1e999 reads as Infinity)", () => "overflow", /point 1's loadMs/],
        ["points at other lengths", (body) => ({...body, points: body.points.map((point) => ({...point, tokens: (point.tokens as number) * 2}))}), /point 1 is not at 32 tokens/],
        ["points in another order", (body) => ({...body, points: [...body.points].reverse()}), /point 1 is not at 32 tokens/],
        ["a cost model edited apart from its points", (body) => ({...body, model: {...body.model, save: {...body.model.save, msPer: 0}}}), /not the one its points fit to/],
        ["a cost model with another source", (body) => ({...body, model: {...body.model, source: "given"}}), /not the one its points fit to/],
        ["no cost model", (body) => ({...body, model: undefined}), /not the one its points fit to/]
    ];
    it.each(cases)("ignores %s", async (_name, change, reason) => {
        const body = change(valid());
        const text = body === "overflow"
            ? JSON.stringify(valid()).replace(`"loadMs":${points[0]!.loadMs}`, "\"loadMs\":1e999")
            : JSON.stringify(body);
        await writeFile(entry.file, text);
        const read = await readCachedKvCost(entry);
        expect(read).toEqual({ignored: expect.stringMatching(reason)});
        if (body !== "overflow")
            expect(checkCachedKvCost(body, entry)).toMatch(reason);
    });

    it("gives another key for any change of model file, load setting, machine or calibration method", () => {
        const key = kvCostCacheKey(facts);
        const changed: KvCostCacheFacts[] = [
            {...facts, model: {...facts.model, path: "/models/b.gguf"}},
            {...facts, model: {...facts.model, bytes: "1001"}},
            {...facts, model: {...facts.model, mtimeNs: "1700000000000000001"}},
            ...Object.entries({contextSize: 2048, batchSize: 256, threads: 1, useMmap: false, useGpu: false, gpuLayers: 3,
                overrides: [{pattern: "^blk\\.0\\.", bufferType: "CPU"}], opOffload: false, kvOffload: false, flashAttention: true, kvCacheType: "q8_0", sequences: 3})
                .map(([name, value]) => ({...facts, load: {...facts.load, [name]: value}})),
            {...facts, machine: {...facts.machine, cpu: "other"}},
            {...facts, machine: {...facts.machine, driver: "NVRM version: 570"}},
            {...facts, machine: {...facts.machine, llamaCppRelease: "b2"}},
            {...facts, machine: {...facts.machine, devices: ["CPU:c:1", "Vulkan0:llvmpipe:2"]}},
            {...facts, method: calibrationMethod(128)},
            {...facts, method: {...facts.method, format: facts.method.format + 1}}
        ];
        const keys = changed.map(kvCostCacheKey);
        expect(keys).not.toContain(key);
        expect(new Set(keys).size).toBe(keys.length);
    });
});
