// A generation in its own process, as the app's engine child runs it: loads a model (optionally with rpc-servers and
// per-tensor overrides) and prints `token <id>` per greedy token, then `done`. Used by tests to kill an rpc-server
// mid-generation without taking the test's own process down (ggml-rpc aborts the process that loses its server).
// usage: node generateInChild.js <request.json>
import fs from "node:fs";
import {getEngineLlama} from "../../native/getEngineLlama.js";
import {generateGreedy} from "../../runtime/generateGreedy.js";
import {PlacedModel, type TensorBufferOverride} from "../../runtime/PlacedModel.js";

/** What the parent asks for. */
export type GenerateInChildRequest = {
    modelPath: string;
    prompt: string;
    maxTokens: number;
    rpcServers: string[];
    overrides: TensorBufferOverride[];
};

const request = JSON.parse(fs.readFileSync(process.argv[2] ?? "", "utf8")) as GenerateInChildRequest;
const engine = await getEngineLlama({gpu: "vulkan", maxThreads: 1, rpcServers: request.rpcServers});
const placed = await PlacedModel.load(engine, {modelPath: request.modelPath, overrides: request.overrides, contextSize: 512});
process.stdout.write("loaded\n");
await generateGreedy(placed, request.prompt, {
    maxTokens: request.maxTokens,
    stopAtEog: false,
    onToken: (token) => process.stdout.write(`token ${token}\n`)
});
process.stdout.write("done\n");
await placed.dispose();
await engine.llama.dispose();
