/**
 * A local HTTP server speaking the Hugging Face Hub endpoints `tensorwise pull` uses — the search (`/api/models?search=`), the tree API
 * (`/api/models/{repo}/tree/{revision}`), the repo API (`/api/models/{repo}`) and file downloads
 * (`/{repo}/resolve/{revision}/{path}`, with HTTP Range; revisions `main` and `v2`) — serving real files given by the test (models written by our
 * GGUF writer). It records every request, so a test can check what was asked for (Range headers) and what was sent.
 */
import {createHash} from "node:crypto";
import http from "node:http";
import type {AddressInfo} from "node:net";

/** A file of a served repository. */
export type LocalHubFile = {
    readonly path: string;
    readonly content: Buffer;
    /** What the listing says, where a test wants it to lie: size and LFS sha256 (defaults: the content's). */
    readonly listedBytes?: number;
    readonly listedSha256?: string;
    /** Listed but answered 404 by the download endpoint. Defaults to `false`. */
    readonly unserved?: boolean;
};

/** How the server misbehaves or slows down, per test. */
export type LocalHubBehaviour = {
    /** Bytes per write and the pause between writes (a slow link, to interrupt a download midway). */
    throttle?: {chunkBytes: number; delayMs: number};
    /** After this many body bytes of a download, send nothing more and keep the connection open. */
    stallAfterBytes?: number;
    /** Ignore Range headers (answer 200 with the whole file). */
    ignoreRange?: boolean;
    /** The token gated repositories require (`Authorization: Bearer <token>`). */
    token?: string;
};

/** One request the server saw. */
export type LocalHubRequest = {readonly url: string; readonly range: string | null; readonly authorization: string | null; sentBytes: number};

/** A running local hub. */
export type LocalHub = {
    readonly endpoint: string;
    readonly requests: LocalHubRequest[];
    behaviour: LocalHubBehaviour;
    close(): Promise<void>;
};

/** Starts a hub on 127.0.0.1 serving `repos` (repo id → files); `gated` repos need {@link LocalHubBehaviour.token}. */
export async function startLocalHub(repos: Record<string, readonly LocalHubFile[]>, options: {gated?: readonly string[]} = {}): Promise<LocalHub> {
    const requests: LocalHubRequest[] = [];
    const sockets = new Set<import("node:net").Socket>();
    const hub: Omit<LocalHub, "endpoint"> = {requests, behaviour: {}, close: async () => {}};
    const server = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1");
        const record: LocalHubRequest = {url: url.pathname + url.search, range: request.headers.range ?? null,
            authorization: request.headers.authorization ?? null, sentBytes: 0};
        requests.push(record);
        const json = (status: number, body: unknown): void => {
            response.writeHead(status, {"Content-Type": "application/json"}).end(JSON.stringify(body));
        };
        const parts = url.pathname.split("/").filter((p) => p !== "").map(decodeURIComponent);
        const api = parts[0] === "api" && parts[1] === "models";
        if (api && parts.length === 2) {
            const search = (url.searchParams.get("search") ?? "").toLowerCase();
            return json(200, Object.keys(repos).filter((id) => id.toLowerCase().includes(search))
                .map((id, index) => ({id, modelId: id, downloads: 1000 - index, likes: 10, tags: ["gguf"]})));
        }
        const repo = api ? `${parts[2]}/${parts[3]}` : `${parts[0]}/${parts[1]}`;
        const files = repos[repo];
        if (files == null) return json(404, {error: "Repository not found"});
        if (options.gated?.includes(repo) && request.headers.authorization !== `Bearer ${hub.behaviour.token}`)
            return json(401, {error: "Access to this model is restricted"});
        if (api && parts.length === 4)
            return json(200, {id: repo, siblings: files.map((f) => ({rfilename: f.path}))});
        if (api && parts[4] === "tree" && !["main", "v2"].includes(parts[5] ?? ""))
            return json(404, {error: "Invalid rev id"});
        if (api && parts[4] === "tree")
            return json(200, files.map((f) => {
                const bytes = f.listedBytes ?? f.content.length;
                return {type: "file", path: f.path, size: bytes, oid: "0".repeat(40),
                    lfs: {oid: f.listedSha256 ?? createHash("sha256").update(f.content).digest("hex"), size: bytes, pointerSize: 134}};
            }));
        if (!api && parts[2] === "resolve") {
            const file = files.find((f) => f.path === parts.slice(4).join("/"));
            if (file == null || file.unserved === true) return json(404, {error: "Entry not found"});
            serveFile(request, response, file.content, hub.behaviour, record);
            return;
        }
        json(404, {error: "no such endpoint"});
    });
    server.on("connection", (socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const {port} = server.address() as AddressInfo;
    return Object.assign(hub, {
        endpoint: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((resolve) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => resolve());
        })
    });
}

function serveFile(request: http.IncomingMessage, response: http.ServerResponse, content: Buffer, behaviour: LocalHubBehaviour, record: LocalHubRequest): void {
    let start = 0, end = content.length - 1, status = 200;
    const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? "");
    if (range != null && behaviour.ignoreRange !== true) {
        start = Number(range[1]);
        end = range[2] === "" ? content.length - 1 : Math.min(Number(range[2]), content.length - 1);
        if (start >= content.length) {
            response.writeHead(416, {"Content-Range": `bytes */${content.length}`}).end();
            return;
        }
        status = 206;
    }
    response.writeHead(status, {
        "Content-Length": String(end - start + 1), "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream",
        ...(status === 206 ? {"Content-Range": `bytes ${start}-${end}/${content.length}`} : {})
    });
    const body = content.subarray(start, end + 1);
    const chunkBytes = behaviour.throttle?.chunkBytes ?? 64 * 1024;
    let offset = 0;
    const next = (): void => {
        if (response.destroyed) return;
        if (behaviour.stallAfterBytes != null && record.sentBytes >= behaviour.stallAfterBytes) return; // say nothing more
        if (offset >= body.length) {
            response.end();
            return;
        }
        const limit = behaviour.stallAfterBytes != null ? Math.min(chunkBytes, behaviour.stallAfterBytes - record.sentBytes) : chunkBytes;
        const chunk = body.subarray(offset, offset + limit);
        offset += chunk.length;
        record.sentBytes += chunk.length;
        response.write(chunk, () => setTimeout(next, behaviour.throttle?.delayMs ?? 0));
    };
    next();
}
