import type {EngineLlama} from "../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {makeTestModel} from "../../engine/testing/testModels.js";
import type {KvCostModel} from "../kv/KvCostModel.js";
import {fifoPolicy} from "../scheduling/schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer, type OpenAiServerOptions} from "../serveOpenAi.js";

/** A fixed cost model, so a test server starts without calibrating (its decisions are not what these tests look at). */
export const FIXED_KV_COST: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-6}, load: {fixedMs: 0, msPer: 1e-6},
    prefill: {fixedMs: 1, msPer: 1}, source: "given (tests)"
};

/** The generated "tiny" model loaded on the CPU, and servers started on it one after another. */
export async function loadTestModel(engine: EngineLlama, name = "kv-tiny", sequences = 1): Promise<PlacedModel> {
    const modelPath = await makeTestModel(name, {preset: "tiny", type: "q8_0"});
    return await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences});
}

export function serveTestModel(placed: PlacedModel, options: Partial<OpenAiServerOptions> = {}): Promise<OpenAiServer> {
    return serveOpenAi({placed, modelId: "kv-tiny", queueLength: 4, requestTimeoutMs: 60_000, policy: fifoPolicy, kv: {costModel: FIXED_KV_COST}, ...options});
}
