import {readFileSync} from "node:fs";
import {mkdtemp, readFile, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {afterAll, beforeAll, describe, expect, it} from "vitest";

// The packaged app's Electron fuses: what package.json asks for, and that the afterPack hook writes exactly that.
const root = path.resolve(import.meta.dirname, "../..");
const packageJson = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
    electronFuses?: Record<string, boolean>;
    build?: {afterPack?: string; asar?: boolean};
};
type FlipFusesScript = {
    readFuseSettings(packageJsonPath?: string): Promise<Record<string, boolean>>;
    applyFuses(binaryPath: string, options: Record<string, boolean>): Promise<void>;
};
/** Sentinel and layout of the fuse wire in an Electron binary (@electron/fuses, src/constants.ts). */
const SENTINEL = "dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX";

describe("Electron fuses in the build config", () => {
    it("turns off running as Node, NODE_OPTIONS, inspect flags and file:// privileges; turns on cookie encryption and asar-only loading with integrity", () => {
        expect(packageJson.electronFuses).toEqual({
            runAsNode: false,
            enableCookieEncryption: true,
            enableNodeOptionsEnvironmentVariable: false,
            enableNodeCliInspectArguments: false,
            enableEmbeddedAsarIntegrityValidation: true,
            onlyLoadAppFromAsar: true,
            grantFileProtocolExtraPrivileges: false
        });
        expect(packageJson.build?.asar).toBe(true);
    });

    it("applies them after packing, through the hook script that exists", async () => {
        expect(packageJson.build?.afterPack).toBe("./scripts/flipFuses.mjs");
        const script = await import(pathToFileURL(path.join(root, packageJson.build!.afterPack!)).href) as {default: unknown};
        expect(typeof script.default).toBe("function");
    });
});

describe("scripts/flipFuses.mjs", () => {
    let dir: string;
    let script: FlipFusesScript;
    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "fuses-"));
        script = await import(pathToFileURL(path.join(root, "scripts/flipFuses.mjs")).href) as FlipFusesScript;
    });
    afterAll(() => rm(dir, {recursive: true, force: true}));

    it("writes every fuse of package.json into a binary's fuse wire", async () => {
        // a stand-in binary: bytes around a version-1 wire of 9 fuses, all in Electron's shipped state but the last
        const wire = Buffer.from("101101010", "ascii");
        const binary = Buffer.concat([Buffer.alloc(100, 0xcc), Buffer.from(SENTINEL, "ascii"), Buffer.from([1, wire.length]), wire, Buffer.alloc(100, 0xcc)]);
        const file = path.join(dir, "electron");
        await writeFile(file, binary);
        await script.applyFuses(file, await script.readFuseSettings());
        const written = await readFile(file);
        const at = written.indexOf(SENTINEL) + SENTINEL.length + 2;
        // RunAsNode 0, CookieEncryption 1, NodeOptions 0, CliInspect 0, AsarIntegrity 1, OnlyAsar 1,
        // V8 snapshot (not set: unchanged 0), FileProtocol 0, and the fuse @electron/fuses does not know (unchanged 0)
        expect(written.subarray(at, at + wire.length).toString("ascii")).toBe("010011000");
        expect(written.length).toBe(binary.length);
    });

    it("refuses a misspelt fuse name instead of skipping it", async () => {
        const file = path.join(dir, "package.json");
        await writeFile(file, JSON.stringify({electronFuses: {runAsNod: false}}));
        await expect(script.readFuseSettings(file)).rejects.toThrow(/electronFuses\.runAsNod/);
    });
});
