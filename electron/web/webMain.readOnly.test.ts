import {execFileSync, spawn} from "node:child_process";
import {existsSync, promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../engine/testing/requiredOrSkip.js";

// Web mode started on a data folder that cannot be written (a read-only mount), holding a saved conversation, a
// half-finished upload and an index out of step: each of those used to write at start and end the process (EROFS).
const root = path.resolve(import.meta.dirname, "../..");
const webMain = path.join(root, "dist/electron/web/webMain.js");
const mountDir = path.join(os.tmpdir(), `tensorwise-ro-${process.pid}`);
const problem = existsSync(webMain) ? (() => {
    if (process.platform !== "linux")
        return "tmpfs is Linux-only";
    try {
        execFileSync("mkdir", ["-p", mountDir]);
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountDir], {stdio: "pipe"});
        return null;
    } catch (error) {
        return `cannot mount a tmpfs here (${(error as Error).message.split("\n")[0]})`;
    }
})() : `web mode is not built (${webMain}); run \`npm run build\``;
const missing = requiredOrSkip("web mode on a read-only disk", problem);

describe.skipIf(missing != null)("web mode on a read-only data folder", () => {
    afterAll(() => {
        execFileSync("umount", [mountDir]);
        execFileSync("rmdir", [mountDir]);
    });

    it("starts, serves the saved conversations, and says in one sentence that chats can't be saved", async () => {
        const conversations = path.join(mountDir, "conversations");
        await fs.mkdir(conversations, {recursive: true});
        const id = "0b6f2c1e-0000-4000-8000-000000000001";
        await fs.writeFile(path.join(conversations, `${id}.json`), JSON.stringify({
            id, title: "Saved", updatedAt: 1, messageCount: 1, messages: [{id: "m", role: "user", text: "kept", createdAt: 1}]
        }));
        await fs.mkdir(path.join(mountDir, "models"));
        await fs.writeFile(path.join(mountDir, "models", ".cut.gguf.1a2b3c4d.partial"), "half");
        await fs.chmod(mountDir, 0o755);
        execFileSync("mount", ["-o", "remount,ro", mountDir]);

        const host = spawn(process.execPath, [webMain, "--data-dir", mountDir, "--port", "0"], {
            stdio: ["ignore", "pipe", "pipe"], env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"}
        });
        let text = "";
        host.stdout.on("data", (chunk: Buffer) => text += chunk.toString());
        host.stderr.on("data", (chunk: Buffer) => text += chunk.toString());
        try {
            await expect.poll(() => text.includes("Open http://127.0.0.1:") || host.exitCode != null, {timeout: 60_000}).toBe(true);
            expect(host.exitCode, text).toBeNull();
            expect(text).toContain(`The data folder ${mountDir} is read-only (EROFS): chats can be read but not saved.`);
        } finally {
            host.kill("SIGTERM");
            await new Promise((resolve) => host.once("exit", resolve));
        }
    }, 90_000);
});
