/**
 * What a load speculates with, as the engine process keeps it: the runtime's load options, what the app shows, and
 * the key its measured α is recorded under (engine/speculative/acceptance.ts). A planned load takes the planner's
 * decision (engine/speculative/planSpeculative.ts); a load without a plan (`-ngl`, a placement file) runs a kind asked
 * for by name, checked the same way, unpriced, and declines "auto" with the reason.
 */
import path from "node:path";
import {DEFAULT_DRAFT_MAX, type SpeculativeRequest, type SpeculativeState} from "../contract/speculative.js";
import {inspectGguf, type InspectedModel} from "../engine/gguf/inspectGguf.js";
import {validateGgufOutOfProcess} from "../engine/gguf/validateGgufOutOfProcess.js";
import type {SpeculativeLoad} from "../engine/runtime/PlacedModel.js";
import {acceptanceKey} from "../engine/speculative/acceptance.js";
import {checkDraftModel, checkMtpModel, checkSpeculativeRequest} from "../engine/speculative/checkSpeculativeModels.js";
import type {SpeculativeDecision} from "../engine/speculative/chooseSpeculative.js";
import {mtpHostOverride} from "../engine/speculative/mtpStep.js";

/** The runtime's speculation (`null`: none), the app's view of it, and where its α is recorded (absent: not running). */
export type LoadSpeculative = {readonly load: SpeculativeLoad | null; readonly state: SpeculativeState; readonly acceptanceKey?: string};

const NAMES = {ngram: "n-gram lookup", draft: "a draft model", mtp: "the model's MTP head"} as const;

/** The planner's decision for the model at `modelPath`, as a load carries it. */
export function plannedSpeculative(modelPath: string, decision: SpeculativeDecision): LoadSpeculative {
    const load = decision.load;
    const draftPath = load?.draft?.modelPath;
    const chosen = decision.chosen;
    const state: SpeculativeState = {
        kind: load?.kind ?? null,
        nMax: load?.nMax ?? null,
        draftFile: draftPath != null ? path.basename(draftPath) : null,
        sentence: decision.sentence,
        predicted: chosen != null && decision.acceptance != null
            ? {alpha: chosen.alpha, alphaMeasured: decision.acceptance.source === "measured", tpotMs: chosen.tpotMs, plainTpotMs: chosen.plainTpotMs}
            : null
    };
    return {load, state, ...(load != null ? {acceptanceKey: acceptanceKey(modelPath, load.kind, draftPath)} : {})};
}

/**
 * A load without a plan: a kind asked for by name runs as asked (a draft model in host memory unless the model is
 * wholly on the GPU: with no plan there is no room known to put it in), checked as a planned one is; `"auto"` has
 * nothing to price with and runs none, saying so. `undefined`: nothing asked.
 */
export async function unplannedSpeculative(modelPath: string, model: InspectedModel, request: SpeculativeRequest | undefined,
    options: {modelWhollyOnGpu: boolean; unpricedBecause: string; signal?: AbortSignal}): Promise<LoadSpeculative | undefined> {
    if (request == null) return undefined;
    const none = (sentence: string): LoadSpeculative => ({load: null, state: {kind: null, nMax: null, draftFile: null, sentence, predicted: null}});
    checkSpeculativeRequest(request);
    if (request.choice === "off") return none("No speculative decoding (turned off).");
    if (request.choice === "auto")
        return none(`No speculative decoding: ${options.unpricedBecause} is not priced by the cost model, so "auto" has nothing to choose by. ` +
            "Name a kind (n-gram lookup, a draft model, the model's MTP head) to run it anyway.");
    checkSpeculativeRequest(request);
    const kind = request.choice;
    let load: SpeculativeLoad;
    if (kind === "draft") {
        const draft = inspectGguf(await validateGgufOutOfProcess(request.draftPath!, {timeoutMs: 30_000, signal: options.signal}));
        checkDraftModel(model, draft);
        load = {kind, nMax: request.nMax ?? DEFAULT_DRAFT_MAX, draft: {modelPath: request.draftPath!, gpuLayers: options.modelWhollyOnGpu ? "max" : 0}};
    } else if (kind === "mtp") {
        checkMtpModel(model);
        load = {kind, nMax: request.nMax ?? DEFAULT_DRAFT_MAX, overrides: [mtpHostOverride(model)]};
    } else {
        load = {kind, nMax: request.nMax ?? DEFAULT_DRAFT_MAX,
            ...(request.ngramSizeN != null ? {ngramSizeN: request.ngramSizeN} : {}), ...(request.ngramSizeM != null ? {ngramSizeM: request.ngramSizeM} : {})};
    }
    return {
        load,
        state: {kind, nMax: load.nMax ?? DEFAULT_DRAFT_MAX, draftFile: request.draftPath != null ? path.basename(request.draftPath) : null,
            sentence: `Speculative decoding with ${NAMES[kind]}, ${load.nMax} tokens a step, as asked (not priced: ${options.unpricedBecause} is not).`, predicted: null},
        acceptanceKey: acceptanceKey(modelPath, kind, request.draftPath)
    };
}
