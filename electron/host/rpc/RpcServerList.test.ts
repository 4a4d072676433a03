import {mkdtemp, readdir, readFile, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {MAX_RPC_SERVERS} from "../../engine/rpc/parseRpcEndpoint.js";
import {RPC_SERVERS_FILE, RpcServerList} from "./RpcServerList.js";

describe("RpcServerList: the rpc-servers of the settings, kept on disk", () => {
    let dir: string;
    let file: string;
    beforeEach(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-rpc-list-"));
        file = path.join(dir, RPC_SERVERS_FILE);
    });
    afterEach(async () => {
        await rm(dir, {recursive: true, force: true});
    });

    it("keeps the order added, once each, across a restart of the app", async () => {
        const list = new RpcServerList(file);
        await list.add("10.0.0.2:50052");
        await list.add("10.0.0.3:50053");
        await list.add("10.0.0.2:50052");
        await list.remove("gone:1");
        expect(await new RpcServerList(file).list()).toEqual(["10.0.0.2:50052", "10.0.0.3:50053"]);
        await list.remove("10.0.0.2:50052");
        expect(await new RpcServerList(file).list()).toEqual(["10.0.0.3:50053"]);
    });

    it(`refuses a ${MAX_RPC_SERVERS + 1}th server in one sentence, keeping the ${MAX_RPC_SERVERS}`, async () => {
        const list = new RpcServerList(file);
        for (let port = 1; port <= MAX_RPC_SERVERS; port++)
            await list.add(`10.0.0.2:${port}`);
        await expect(list.add("10.0.0.3:1")).rejects.toThrow(`at most ${MAX_RPC_SERVERS} rpc-servers can be added: remove one first`);
        expect(await new RpcServerList(file).list()).toHaveLength(MAX_RPC_SERVERS);
    });

    it("moves a file it cannot read as a list aside, untouched, and starts empty", async () => {
        const foreign = JSON.stringify({servers: ["not an address"]});
        await writeFile(file, foreign);
        const list = new RpcServerList(file);
        expect(await list.list()).toEqual([]);
        const aside = (await readdir(dir)).filter((name) => name.startsWith("rpc-servers.unreadable-"));
        expect(aside).toHaveLength(1);
        expect(await readFile(path.join(dir, aside[0]!), "utf8")).toBe(foreign);
        await list.add("10.0.0.2:50052");
        expect(await new RpcServerList(file).list()).toEqual(["10.0.0.2:50052"]);
    });
});
