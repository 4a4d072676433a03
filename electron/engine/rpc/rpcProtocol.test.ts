// The wire constants against the llama.cpp source the RPC backend and rpc-server are built from (native/install.mjs
// extracts it to build/native/llama.cpp); skipped, with the reason, without it.
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, expect, it} from "vitest";
import {requiredOrSkip} from "../testing/requiredOrSkip.js";
import {
    helloRequest, RPC_CMD_COUNT, RPC_CMD_DEVICE_COUNT, RPC_CMD_HELLO, RPC_CMD_NONE, RPC_HELLO_REPLY_BYTES, RPC_HELLO_REQUEST_BYTES, RPC_PROTO_MAJOR_VERSION,
    RPC_PROTO_MINOR_VERSION
} from "./rpcProtocol.js";

const ggml = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../build/native/llama.cpp/ggml");
const sources = [path.join(ggml, "include/ggml-rpc.h"), path.join(ggml, "src/ggml-rpc/ggml-rpc.cpp"), path.join(ggml, "src/ggml-rpc/transport.h")];
const skip = requiredOrSkip("the RPC protocol check", sources.every((file) => fs.existsSync(file)) ? null : "build/native/llama.cpp is not extracted (npm run native)");

describe.skipIf(skip != null)("rpcProtocol.ts matches ggml-rpc's source", () => {
    it("has the protocol version, the command numbers and the hello sizes llama.cpp has", () => {
        const [header, cpp, transport] = sources.map((file) => fs.readFileSync(file, "utf8")) as [string, string, string];
        expect(Number(/#define RPC_PROTO_MAJOR_VERSION\s+(\d+)/.exec(header)![1])).toBe(RPC_PROTO_MAJOR_VERSION);
        expect(Number(/#define RPC_PROTO_MINOR_VERSION\s+(\d+)/.exec(header)![1])).toBe(RPC_PROTO_MINOR_VERSION);
        const commands = /enum rpc_cmd \{([^}]*)\}/.exec(cpp)![1]!.split(",").map((entry) => entry.replace(/=.*/, "").trim()).filter(Boolean);
        expect(commands.indexOf("RPC_CMD_HELLO")).toBe(RPC_CMD_HELLO);
        expect(commands.indexOf("RPC_CMD_DEVICE_COUNT")).toBe(RPC_CMD_DEVICE_COUNT);
        expect(commands.indexOf("RPC_CMD_NONE")).toBe(RPC_CMD_NONE);
        expect(commands.indexOf("RPC_CMD_COUNT")).toBe(RPC_CMD_COUNT);
        const caps = Number(/RPC_CONN_CAPS_SIZE = (\d+)/.exec(transport)![1]);
        expect(RPC_HELLO_REQUEST_BYTES).toBe(caps);
        expect(RPC_HELLO_REPLY_BYTES).toBe(4 + caps);
        expect(helloRequest().toString("hex")).toBe("0e" + "1800000000000000" + "00".repeat(caps));
    });
});
