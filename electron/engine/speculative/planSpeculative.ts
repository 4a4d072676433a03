/**
 * Speculative decoding planned with the placement (autoPlan.ts calls it once the model's plan is made): the kinds the
 * model can run, checked by name before anything loads (checkSpeculativeModels.ts), a draft model placed on the GPU
 * when the budget left after the model's plan holds its weights, KV cache and compute buffer (else in host memory),
 * an MTP head in host memory (its weights are not in the model's plan), each priced with its α
 * (acceptance.ts), and the choice (chooseSpeculative.ts).
 */
import type {ResolvedSettings} from "../../contract/settings.js";
import type {SpeculativeRequest} from "../../contract/speculative.js";
import {inspectGguf, type InspectedModel} from "../gguf/inspectGguf.js";
import {validateGgufOutOfProcess} from "../gguf/validateGgufOutOfProcess.js";
import {costContext, vramNeed, type CostInputs} from "../planner/costModel.js";
import {layerSplit} from "../planner/resolvePlacement.js";
import type {StrategyResult} from "../planner/strategies/StrategyResult.js";
import {plannerModelFrom} from "../planner/types.js";
import {acceptanceKey, readAcceptance} from "./acceptance.js";
import {checkDraftModel, checkMtpModel, checkSpeculativeRequest} from "./checkSpeculativeModels.js";
import {chooseSpeculative, type SpeculativeCandidate, type SpeculativeDecision} from "./chooseSpeculative.js";
import {mtpHostOverride, mtpStepMs} from "./mtpStep.js";

/**
 * What the user asked for, where measured α are kept (the profile cache folder), and the model's own path they are
 * kept under (`acceptancePath`; defaults to the path planned from, which may be a pinned copy's: pinModelFile.ts).
 */
export type SpeculativePlanRequest = SpeculativeRequest & {readonly acceptanceDir: string; readonly acceptancePath?: string};
/** A speculation asked of the planner: the folder defaults to the profile cache's. */
export type SpeculativeAsked = Omit<SpeculativePlanRequest, "acceptanceDir"> & {readonly acceptanceDir?: string};

/** Plans speculation for `result`, the model's plan under `budgetBytes` on the machine `cost` describes. */
export async function planSpeculative(options: {
    modelPath: string; model: InspectedModel; result: StrategyResult; cost: CostInputs; budgetBytes: number; request: SpeculativePlanRequest;
    gpuBufferType: string | null; signal?: AbortSignal;
}): Promise<SpeculativeDecision> {
    const {model, result, cost, request} = options;
    checkSpeculativeRequest(request);
    const target = {cost, resolved: result.resolved, settings: result.settings};
    if (request.choice === "off") return chooseSpeculative(target, "off", []);
    const candidates: SpeculativeCandidate[] = [];
    const acceptance = (kind: SpeculativeCandidate["kind"], draftPath?: string) =>
        readAcceptance(request.acceptanceDir, acceptanceKey(request.acceptancePath ?? options.modelPath, kind, draftPath), kind);
    candidates.push({kind: "ngram", acceptance: acceptance("ngram")});
    if (request.draftPath != null && (request.choice === "auto" || request.choice === "draft")) {
        const draftModel = inspectGguf(await validateGgufOutOfProcess(request.draftPath, {timeoutMs: 30_000, signal: options.signal}));
        checkDraftModel(model, draftModel);
        candidates.push({kind: "draft", acceptance: acceptance("draft", request.draftPath),
            draft: placeDraft(request.draftPath, draftModel, cost, result.settings, options.budgetBytes - result.prediction.vram.total, options.gpuBufferType)});
    }
    if (request.choice === "mtp") checkMtpModel(model);
    const hasMtp = (() => {
        try {
            checkMtpModel(model);
            return true;
        } catch {
            return false;
        }
    })();
    if (hasMtp) candidates.push({kind: "mtp", acceptance: acceptance("mtp"), mtp: {stepMs: mtpStepMs(model, target), overrides: [mtpHostOverride(model)]}});
    return chooseSpeculative(target, request.choice, candidates, {
        ...(request.nMax != null ? {nMax: request.nMax} : {}),
        ...(request.ngramSizeN != null ? {ngramSizeN: request.ngramSizeN} : {}),
        ...(request.ngramSizeM != null ? {ngramSizeM: request.ngramSizeM} : {})
    });
}

/**
 * The draft model on the GPU (every layer) where the budget left after the model's plan holds its weights, KV cache
 * and compute buffer at the model's context, else in host memory (-ngl 0): the draft's decode steps are many and
 * small, so it gains most from the GPU, but it never takes the model's room.
 */
function placeDraft(draftPath: string, draftModel: InspectedModel, cost: CostInputs, settings: ResolvedSettings, roomBytes: number,
    gpuBufferType: string | null): NonNullable<SpeculativeCandidate["draft"]> {
    const planner = plannerModelFrom(draftModel);
    const draftCost: CostInputs = {model: planner, profile: cost.profile, gpuDevice: cost.gpuDevice};
    const onGpu = layerSplit(planner, planner.layerCount + 1);
    const fits = gpuBufferType != null && settings.useGpu &&
        vramNeed(costContext(draftCost, settings, {promptTokens: 1, genTokens: 2}), onGpu).total <= roomBytes;
    const resolved = fits ? onGpu : layerSplit(planner, 0);
    return {plan: {cost: draftCost, resolved, settings}, load: {modelPath: draftPath, gpuLayers: fits ? "max" : 0}};
}
