import fs from "node:fs/promises";
import path from "node:path";
import type {Budget, LoadedModelState} from "../contract/ipc.js";
import type {RuntimeSettings} from "../contract/settings.js";
import {placementFromJson} from "../engine/placement/Placement.js";
import type {EngineService} from "../engineProcess/EngineService.js";
import type {SpeculativeRequest} from "../contract/speculative.js";

/** The load flags `chat` and `serve` share: a placement file, `--auto [--budget]`, or whole layers (`--gpu-layers`). */
export type LoadFlags = {
    placement?: string;
    auto?: boolean;
    budget?: Budget;
    gpuLayers?: number | "max";
    contextSize?: number;
    batchSize?: number;
    threads?: number;
    /** llama.cpp knobs the user fixed (flagKnobs, electron/cli/flags.ts). */
    knobs?: Partial<RuntimeSettings>;
    /** Speculative decoding (flagSpeculative, electron/cli/flags.ts); absent: none. */
    speculative?: SpeculativeRequest;
};

/** Loads `modelPath` as the flags say: the placement file's plan, auto-offload, or `gpuLayers` (default all) layers. */
export async function loadFromFlags(service: EngineService, modelPath: string, flags: LoadFlags, taskId: string): Promise<LoadedModelState> {
    const resolved = path.resolve(modelPath);
    const settings = {contextSize: flags.contextSize, batchSize: flags.batchSize, threads: flags.threads ?? null, ...flags.knobs};
    const spec = flags.speculative == null ? {} : {speculative: {...flags.speculative,
        ...(flags.speculative.draftPath != null ? {draftPath: path.resolve(flags.speculative.draftPath)} : {})}};
    if (flags.placement != null) {
        const card = await service.inspect(resolved);
        const placement = placementFromJson(await fs.readFile(flags.placement, "utf8"), card.tensors);
        return await service.loadWithPlacement({path: resolved, placement, settings, taskId, ...spec});
    }
    if (flags.auto === true)
        return await service.autoOffload({path: resolved, budget: flags.budget ?? {kind: "auto"}, settings, taskId, ...spec});
    return await service.load({path: resolved, gpuLayers: flags.gpuLayers ?? "max", settings, taskId, ...spec});
}
