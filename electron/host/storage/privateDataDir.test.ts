import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {makeDataDirPrivate} from "./privateDataDir.js";

// A data folder left by an older version: 0755 folders, 0644 files — another local user could read server.json
// (the server's API key) and every conversation.
let parent: string;
let dataDir: string;
const umask = process.umask();

beforeEach(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-private-"));
    dataDir = path.join(parent, "data");
});
afterEach(async () => {
    process.umask(umask);
    await fs.rm(parent, {recursive: true, force: true});
});

const mode = async (file: string): Promise<number> => (await fs.lstat(file)).mode & 0o777;

describe("makeDataDirPrivate", () => {
    it("tightens an existing data folder: folders 0700, the app's files 0600; other entries and link targets untouched", async () => {
        for (const dir of ["conversations/damaged", "bench/run-1", "models", "Cache"])
            await fs.mkdir(path.join(dataDir, dir), {recursive: true, mode: 0o755});
        const files = ["server.json", "recent-models.json", "conversations/c.json", "conversations/damaged/d.json", "bench/run-1/report.json", "models/m.gguf"];
        for (const file of files)
            await fs.writeFile(path.join(dataDir, file), "{}", {mode: 0o644});
        await fs.writeFile(path.join(dataDir, "Cache", "electron-owned"), "x", {mode: 0o644});
        const outside = path.join(parent, "outside.gguf");
        await fs.writeFile(outside, "x", {mode: 0o644});
        await fs.symlink(outside, path.join(dataDir, "models", "link.gguf"));
        await fs.chmod(dataDir, 0o755);

        expect(await makeDataDirPrivate(dataDir)).toBeNull();

        expect(await mode(dataDir)).toBe(0o700);
        for (const dir of ["conversations", "conversations/damaged", "bench", "bench/run-1", "models"])
            expect(await mode(path.join(dataDir, dir)), dir).toBe(0o700);
        for (const file of files)
            expect(await mode(path.join(dataDir, file)), file).toBe(0o600);
        expect(await mode(path.join(dataDir, "Cache", "electron-owned"))).toBe(0o644);
        expect(await mode(outside)).toBe(0o644);
    });

    it("creates a missing data folder 0700, and files written afterwards are private from the start", async () => {
        expect(await makeDataDirPrivate(dataDir)).toBeNull();
        expect(await mode(dataDir)).toBe(0o700);
        await fs.writeFile(path.join(dataDir, "later.json"), "{}");
        expect(await mode(path.join(dataDir, "later.json"))).toBe(0o600);
    });

    it("leaves a shared folder given as the data folder (sticky, like /tmp) as it is", async () => {
        await fs.mkdir(dataDir, {mode: 0o777});
        await fs.chmod(dataDir, 0o1777);
        await makeDataDirPrivate(dataDir);
        expect((await fs.lstat(dataDir)).mode & 0o7777).toBe(0o1777);
    });
});
