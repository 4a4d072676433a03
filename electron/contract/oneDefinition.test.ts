/**
 * Facts the contract defines once, kept that way: no other source file re-decides them with a copy of the literal.
 * (Tests and e2e may restate a fact on purpose, as an independent check, so they are not scanned.)
 */
import {promises as fs} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, expect, it} from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Every non-test TypeScript source of the app (electron/** and renderer/src/**), relative to the repo root. */
async function appSources(): Promise<string[]> {
    const found: string[] = [];
    async function walk(dir: string): Promise<void> {
        for (const entry of await fs.readdir(path.join(root, dir), {withFileTypes: true})) {
            const relative = `${dir}/${entry.name}`;
            if (entry.isDirectory() && entry.name !== "testing" && entry.name !== "node_modules")
                await walk(relative);
            else if (entry.isFile() && /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
                found.push(relative);
        }
    }
    await walk("electron");
    await walk("renderer/src");
    return found;
}

/** A fact, where it is defined, and the copies of it that must not appear elsewhere. */
const facts: {fact: string; home: string; copies: RegExp}[] = [
    {fact: "which buffer types are host memory", home: "electron/contract/memory.ts", copies: /endsWith\(["']_Host["']\)|\/_Host\$\/|\/\\d\$\/\.test\(bufferType\)/},
    {fact: "the default context size and micro-batch", home: "electron/contract/settings.ts", copies: /(contextSize|batchSize)\S*\s*(\?\?|:|=)\s*(2048|512)\b/},
    {fact: "the report file names", home: "electron/contract/bench.ts", copies: /["'](report\.(json|csv|html)|results\.jsonl)["']/},
    {fact: "the strategy names", home: "electron/contract/strategies.ts", copies: /["']cpu["'],\s*["']layers["'],\s*["']fit["']/},
    {fact: "the strategy colours", home: "electron/contract/strategyStyles.ts", copies: /\b(optimal|layers|oato)["']?\s*:\s*["']#[0-9a-f]{3,8}["']/i},
    {fact: "the event names", home: "electron/contract/requestNames.ts", copies: /["']engine\.state["'],\s*["']task\.progress["']/},
    {fact: "the shape of a request's reply (result or coded error)", home: "electron/contract/envelope.ts", copies: /\{\s*(readonly\s+)?ok:\s*true;\s*(readonly\s+)?result:[^}]*\}\s*\|\s*\{\s*(readonly\s+)?ok:\s*false;\s*(readonly\s+)?error:\s*ContractError/},
    {fact: "the message kinds between processes", home: "electron/contract/envelope.ts", copies: /kind:\s*"(request|response)";\s*id:/},
    {fact: "the settings the engine decides (its threads; mmap off once a weight is on a GPU)", home: "electron/contract/settings.ts", copies: /useMmap\s*\?\?\s*!?\s*\(?\s*(gpu|partlyOnGpu|hasGpu)|threads\s*\?\?\s*engine\.llama\.maxThreads/},
    {fact: "which llama.cpp flags a plan renders as (layer split or overrides)", home: "electron/engine/placement/llamaCppFlags.ts", copies: /render(OverrideFlags|LayerSplitFlags)\(/},
    {fact: "the planner's settings type (it is the contract's ResolvedSettings)", home: "electron/contract/settings.ts", copies: /\btype PlanSettings\b/}
];

describe("one definition per fact", () => {
    it("no app source outside the contract copies a fact the contract defines", async () => {
        const sources = await appSources();
        expect(sources.length).toBeGreaterThan(50);
        const copies: string[] = [];
        for (const file of sources) {
            const text = await fs.readFile(path.join(root, file), "utf8");
            for (const {fact, home, copies: pattern} of facts)
                if (file !== home && pattern.test(text))
                    copies.push(`${file} copies ${fact} (defined in ${home})`);
        }
        expect(copies).toEqual([]);
    });

    it("comments cite what a reader can open (repository files, llama.cpp functions, papers by title), not private notes", async () => {
        const private_ = /\bissue #?\d+\b|\bBRIEF\b|\bseed \d{3}\b|\bthe brief\b/;
        const cited: string[] = [];
        for (const file of await appSources()) {
            const text = await fs.readFile(path.join(root, file), "utf8");
            text.split("\n").forEach((line, i) => {
                if (private_.test(line)) cited.push(`${file}:${i + 1}: ${line.trim()}`);
            });
        }
        expect(cited).toEqual([]);
    });
});
