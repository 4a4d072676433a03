import {execFileSync} from "node:child_process";
import {promises as fs} from "node:fs";
import http from "node:http";
import type {AddressInfo} from "node:net";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, beforeEach, describe, expect, it} from "vitest";
import {cleanStaleUploads, receiveUpload, type ReceiveUploadOptions} from "./receiveUpload.js";

// receiveUpload mounted on a bare node:http server, driven by real HTTP requests.
let server: http.Server;
let port: number;
let root: string;
let modelsDir: string;
let uploadOptions: ReceiveUploadOptions = {};

type Answer = {status: number; body: {ok: boolean; result?: {path: string; bytes: number; reused: boolean}; error?: {code: string; message: string}}};

beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), "receive-upload-"));
    server = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1");
        void receiveUpload(request, response, url.searchParams.get("name") ?? "", modelsDir, uploadOptions).then((result) => {
            response.writeHead(result.status, {"Content-Type": "application/json"});
            response.end(JSON.stringify(result.body));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await fs.rm(root, {recursive: true, force: true});
});

let testCount = 0;
beforeEach(async () => {
    modelsDir = path.join(root, `models-${++testCount}`);
    uploadOptions = {};
});

function readAnswer(response: http.IncomingMessage): Promise<Answer> {
    return new Promise((resolve) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => text += chunk);
        response.on("end", () => resolve({status: response.statusCode ?? 0, body: JSON.parse(text) as Answer["body"]}));
    });
}

/** A PUT with a Content-Length and the whole body. */
function put(name: string, body: Buffer, headers: Record<string, string> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
        const request = http.request({host: "127.0.0.1", port, method: "PUT", path: `/api/upload?name=${encodeURIComponent(name)}`,
            headers: {"content-length": String(body.length), ...headers}}, (response) => void readAnswer(response).then(resolve));
        request.on("error", reject);
        request.end(body);
    });
}

/**
 * A chunked PUT (no Content-Length) that keeps sending 64 KiB chunks until the server answers or `totalBytes` is sent.
 * Resolves with the answer and how many bytes were handed to the socket by then.
 */
function putChunked(name: string, totalBytes: number, fill = 7): Promise<Answer & {sentBytes: number; closed: Promise<void>}> {
    return new Promise((resolve, reject) => {
        let sentBytes = 0;
        let answered = false;
        const request = http.request({host: "127.0.0.1", port, method: "PUT", path: `/api/upload?name=${encodeURIComponent(name)}`,
            headers: {"transfer-encoding": "chunked"}}, (response) => {
            answered = true;
            void readAnswer(response).then((answer) => resolve({...answer, sentBytes, closed}));
        });
        const closed = new Promise<void>((resolveClosed) => request.on("close", () => resolveClosed()));
        request.on("error", (error) => {
            if (!answered)
                reject(error);
        });
        const chunk = Buffer.alloc(64 * 1024, fill);
        const pump = () => {
            while (!answered && sentBytes < totalBytes) {
                sentBytes += chunk.length;
                if (!request.write(chunk)) {
                    request.once("drain", pump);
                    return;
                }
            }
            if (!answered)
                request.end();
        };
        pump();
    });
}

async function filesIn(dir: string): Promise<string[]> {
    return (await fs.readdir(dir).catch(() => [] as string[])).sort();
}

describe("receiveUpload over HTTP", () => {
    it("stores a chunked upload and reports its size", async () => {
        const answer = await putChunked("m.gguf", 3 * 64 * 1024);
        expect(answer.status).toBe(200);
        expect(answer.body.result).toEqual({path: path.join(modelsDir, "m.gguf"), bytes: 3 * 64 * 1024, reused: false});
        expect(await filesIn(modelsDir)).toEqual(["m.gguf"]);
    });

    it("refuses a declared size over the cap with 413 before reading, and stores nothing", async () => {
        uploadOptions = {maxBytes: 1000};
        const answer = await put("big.gguf", Buffer.alloc(1001, 1));
        expect(answer.status).toBe(413);
        expect(answer.body.error?.code).toBe("too-large");
        expect(answer.body.error?.message).toMatch(/larger than the upload limit/);
        expect(await filesIn(modelsDir)).toEqual([]);
    });

    it("stops a chunked upload once it passes the cap: 413, connection closed, partial deleted", async () => {
        uploadOptions = {maxBytes: 256 * 1024};
        const answer = await putChunked("endless.gguf", 256 * 2 ** 20);
        expect(answer.status).toBe(413);
        expect(answer.body.error?.code).toBe("too-large");
        // the server stopped reading long before the 256 MiB the client was ready to send
        expect(answer.sentBytes).toBeLessThan(64 * 2 ** 20);
        await answer.closed;
        expect(await filesIn(modelsDir)).toEqual([]);
    });

    it("refuses a declared size over the free space less the reserve with 507", async () => {
        uploadOptions = {freeBytes: async () => 2 ** 30 + 500, reserveBytes: 2 ** 30};
        const answer = await put("m.gguf", Buffer.alloc(501, 1));
        expect(answer.status).toBe(507);
        expect(answer.body.error?.message).toMatch(/Not enough disk space for m\.gguf/);
        expect(await filesIn(modelsDir)).toEqual([]);
    });

    it("checks a chunked upload against the free space as bytes arrive: 507 and nothing left", async () => {
        uploadOptions = {freeBytes: async () => 2 ** 30 + 200 * 1024};
        const answer = await putChunked("fills-disk.gguf", 64 * 2 ** 20);
        expect(answer.status).toBe(507);
        expect(answer.body.error?.code).toBe("disk-full");
        expect(answer.body.error?.message).toMatch(/Not enough disk space/);
        await answer.closed;
        expect(await filesIn(modelsDir)).toEqual([]);
    });

    it("a dropped file that is already in a --model-dir answers with that file and keeps no copy; a look-alike or a link there is copied", async () => {
        const modelDir = path.join(root, `model-dir-${testCount}`);
        const outside = path.join(root, `outside-${testCount}`);
        await fs.mkdir(modelDir);
        await fs.mkdir(outside);
        await fs.writeFile(path.join(modelDir, "big.gguf"), "GGUF same bytes");
        uploadOptions = {modelDirs: [modelDir]};
        const same = await put("big.gguf", Buffer.from("GGUF same bytes"));
        expect(same.body.result).toEqual({path: path.join(modelDir, "big.gguf"), bytes: 15, reused: true});
        expect(await filesIn(modelsDir)).toEqual([]);
        expect(await filesIn(modelDir)).toEqual(["big.gguf"]);

        // same name and length, other bytes: a new file in the app's own folder, the --model-dir one untouched
        const other = await put("big.gguf", Buffer.from("GGUF other byte"));
        expect(other.body.result).toEqual({path: path.join(modelsDir, "big.gguf"), bytes: 15, reused: false});
        expect(await fs.readFile(path.join(modelDir, "big.gguf"), "utf8")).toBe("GGUF same bytes");

        // a link in the --model-dir to a file outside it is not an answer (ModelAccess would refuse to open it)
        await fs.writeFile(path.join(outside, "linked.gguf"), "GGUF secret");
        await fs.symlink(path.join(outside, "linked.gguf"), path.join(modelDir, "linked.gguf"));
        const linked = await put("linked.gguf", Buffer.from("GGUF secret"));
        expect(linked.body.result).toEqual({path: path.join(modelsDir, "linked.gguf"), bytes: 11, reused: false});
    });

    it("reuses an existing file with the same content and stores different content under a new name", async () => {
        const first = await put("same.gguf", Buffer.from("GGUF one"));
        expect(first.body.result).toMatchObject({path: path.join(modelsDir, "same.gguf"), reused: false});

        const again = await put("same.gguf", Buffer.from("GGUF one"));
        expect(again.body.result).toEqual({path: path.join(modelsDir, "same.gguf"), bytes: 8, reused: true});

        // same length, different bytes: must not be taken for the same file
        const other = await put("same.gguf", Buffer.from("GGUF two"));
        expect(other.body.result).toMatchObject({path: path.join(modelsDir, "same (2).gguf"), reused: false});
        const third = await putChunked("same.gguf", 64 * 1024, 3);
        expect(third.body.result).toMatchObject({path: path.join(modelsDir, "same (3).gguf"), reused: false});
        const otherAgain = await put("same.gguf", Buffer.from("GGUF two"));
        expect(otherAgain.body.result).toMatchObject({path: path.join(modelsDir, "same (2).gguf"), reused: true});

        expect(await filesIn(modelsDir)).toEqual(["same (2).gguf", "same (3).gguf", "same.gguf"]);
        expect(await fs.readFile(path.join(modelsDir, "same.gguf"), "utf8")).toBe("GGUF one");
        expect(await fs.readFile(path.join(modelsDir, "same (2).gguf"), "utf8")).toBe("GGUF two");
    });

    it("leaves nothing behind when the client aborts mid-upload", async () => {
        const request = http.request({host: "127.0.0.1", port, method: "PUT", path: "/api/upload?name=cut.gguf",
            headers: {"transfer-encoding": "chunked"}});
        request.on("error", () => {});
        request.write(Buffer.alloc(256 * 1024, 1));
        await expect.poll(async () => (await filesIn(modelsDir)).length).toBe(1); // the partial is being written
        expect((await filesIn(modelsDir))[0]).toMatch(/^\.cut\.gguf\..*\.partial$/);
        request.destroy();
        await expect.poll(() => filesIn(modelsDir)).toEqual([]);
    });
});

describe("cleanStaleUploads", () => {
    it("deletes leftover .partial and .tmp files and keeps models", async () => {
        await fs.mkdir(modelsDir, {recursive: true});
        for (const name of [".m.gguf.1a2b3c4d.partial", "m.gguf.tmp", "keep.gguf", "keep (2).gguf"])
            await fs.writeFile(path.join(modelsDir, name), "x");
        await fs.mkdir(path.join(modelsDir, ".dir.partial"));
        expect((await cleanStaleUploads(modelsDir)).sort()).toEqual([".m.gguf.1a2b3c4d.partial", "m.gguf.tmp"]);
        expect(await filesIn(modelsDir)).toEqual([".dir.partial", "keep (2).gguf", "keep.gguf"]);
    });

    it("accepts a models folder that does not exist yet", async () => {
        expect(await cleanStaleUploads(path.join(root, "never-created"))).toEqual([]);
    });
});

// A real full disk: a 1 MiB tmpfs (needs root and mount; skipped with the reason otherwise).
const tmpfsDir = path.join(os.tmpdir(), `receive-upload-tmpfs-${process.pid}`);
const tmpfsProblem = (() => {
    if (process.platform !== "linux")
        return "tmpfs is Linux-only";
    try {
        execFileSync("mkdir", ["-p", tmpfsDir]);
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", tmpfsDir], {stdio: "pipe"});
        return null;
    } catch (error) {
        return `cannot mount a tmpfs here (${(error as Error).message.split("\n")[0]})`;
    }
})();
if (tmpfsProblem != null)
    console.warn(`skipping the full-disk upload test: ${tmpfsProblem}`);

describe.skipIf(tmpfsProblem != null)("receiveUpload on a full disk", () => {
    afterAll(() => {
        execFileSync("umount", [tmpfsDir]);
        execFileSync("rmdir", [tmpfsDir]);
    });

    it("answers 507 on ENOSPC and leaves no file, not even an empty one", async () => {
        modelsDir = tmpfsDir;
        // the probe is blind here, so the write itself runs into the full disk
        uploadOptions = {freeBytes: async () => null};
        const answer = await putChunked("too-big.gguf", 4 * 2 ** 20);
        expect(answer.status).toBe(507);
        expect(answer.body.error?.message).toMatch(/disk filled up/);
        expect(await filesIn(tmpfsDir)).toEqual([]);
    });

    it("refuses up front from the real free space (statfs) of a small disk", async () => {
        modelsDir = tmpfsDir;
        uploadOptions = {reserveBytes: 0};
        const answer = await put("m.gguf", Buffer.alloc(2 * 2 ** 20, 1));
        expect(answer.status).toBe(507);
        expect(answer.body.error?.message).toMatch(/Not enough disk space/);
        expect(await filesIn(tmpfsDir)).toEqual([]);
    });
});
