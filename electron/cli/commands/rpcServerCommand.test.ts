// `tensorwise rpc-server` as the CLI runs it, with the real stock worker (native/buildRpc.mjs); skipped, with the
// reason, without the CPU RPC build.
import fs from "node:fs";
import {describe, expect, it} from "vitest";
import {rpcBuildPaths} from "../../engine/rpc/rpcBuildPaths.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {flagMaxMessageMib} from "../rpcFlags.js";
import {rpcServerCommand} from "./rpcServerCommand.js";
import {freePort} from "../../engine/testing/freePort.js";

const server = rpcBuildPaths("cpu").server;
const skip = requiredOrSkip("the rpc-server command test", fs.existsSync(server) ? null : `${server} is not built (npm run native)`);

describe.skipIf(skip != null)("tensorwise rpc-server: how it ends", () => {
    it("exits non-zero with a sentence naming the signal when its worker is killed (it exited 0)", async () => {
        const out: string[] = [];
        const err: string[] = [];
        const running = rpcServerCommand({out: (line) => out.push(line), err: (line) => err.push(line)},
            {host: "127.0.0.1", port: await freePort(), device: "CPU", threads: 1});
        while (out.length === 0)
            await new Promise((resolve) => setTimeout(resolve, 50));
        const pid = Number(/pid (\d+)/.exec(out[0]!)![1]);
        process.kill(pid, "SIGKILL");
        expect(await running).toBe(128 + 9);
        expect(err.join("\n")).toMatch(/^rpc-server ended on signal SIGKILL, which tensorwise did not send \(a crash, the out-of-memory killer, or another process\)/m);
    }, 30_000);
});

describe("--max-message-mib", () => {
    it("takes whole MiB from 1 to 64 GiB and refuses every other shape in one sentence", () => {
        expect(flagMaxMessageMib(undefined)).toBeUndefined();
        expect(flagMaxMessageMib("2048")).toBe(2048 * 2 ** 20);
        for (const bad of ["0", "65537", "-1", "1.5", "1e3", "0x10", " 12", "", "99999", "１２", true])
            expect(() => flagMaxMessageMib(bad), String(bad)).toThrow(/^--max-message-mib must be a whole number of MiB from 1 to 65536/);
    });
});
