import {create} from "zustand";
import type {Budget, ContractError, LoadedModelState, PlacementStrategy, PlannedLoad, TaskProgress} from "../../../electron/contract/ipc";
import {DEFAULT_RUNTIME_SETTINGS, type RuntimeSettings} from "../../../electron/contract/settings";
import type {SpeculativeChoice, SpeculativeRequest} from "../../../electron/contract/speculative";
import type {LlamaCommandRequest} from "../../../electron/contract/llamaCommand";

/** The llama.cpp knobs a user may fix on the Offload screen; `null`: the planner chooses. */
export type OffloadKnobs = Pick<RuntimeSettings, "useGpu" | "opOffload" | "kvOffload" | "flashAttention" | "kvCacheType">;

export type OffloadSettings = {
    budget: Budget;
    /** `null`: none chosen, the engine's default for the model (2048 tokens, or its trained context where smaller). */
    contextSize: number | null;
    batchSize: number;
    strategy: PlacementStrategy;
    knobs: OffloadKnobs;
    /** Speculative decoding: the planner's choice (`auto`), none, or a kind; a draft model's file from the library for `draft`. */
    speculative: {choice: SpeculativeChoice; draftPath: string | null};
    /** A llama.cpp command to price beside the plan (empty: none), and which of the two Auto-offload loads. */
    llamaCommand: LlamaCommandRequest;
};

/**
 * The current placement job: running with its steps, done, failed, or cancelled by the user. `planned` is the plan
 * the engine sent before loading its weights (shown with its memory estimate while they load); `settings`, those an
 * Auto-offload was asked with (absent for other loads), so that what the plan shown was made with is known after the
 * user changes them.
 */
export type OffloadRun =
    | {status: "idle"}
    | {status: "running"; taskId: string; steps: TaskProgress[]; planned?: PlannedLoad; cancelling?: boolean; settings?: OffloadSettings}
    | {status: "done"; taskId: string; steps: TaskProgress[]; planned?: PlannedLoad; settings?: OffloadSettings}
    | {status: "failed"; taskId: string; steps: TaskProgress[]; message: string; error?: ContractError; planned?: PlannedLoad}
    | {status: "cancelled"; taskId: string; steps: TaskProgress[]};

export type PlanStore = {
    settings: OffloadSettings;
    run: OffloadRun;
    loaded: LoadedModelState | null;
    setSettings(change: Partial<OffloadSettings>): void;
    setRun(run: OffloadRun): void;
    /** A `task.progress` event: updates the running task's step (same step name replaces, new one appends) and keeps its plan. */
    progress(progress: TaskProgress): void;
    setLoaded(loaded: LoadedModelState | null): void;
};

export const DEFAULT_OFFLOAD_SETTINGS: OffloadSettings = {
    budget: {kind: "auto"}, contextSize: null, batchSize: DEFAULT_RUNTIME_SETTINGS.batchSize, strategy: "optimal",
    knobs: {useGpu: null, opOffload: null, kvOffload: null, flashAttention: null, kvCacheType: DEFAULT_RUNTIME_SETTINGS.kvCacheType},
    speculative: {choice: "auto", draftPath: null},
    llamaCommand: {line: "", load: "plan"}
};

/** The command to send with an Auto-offload: none while the box is empty. */
export function llamaCommandRequest(settings: Pick<OffloadSettings, "llamaCommand">): LlamaCommandRequest | null {
    return settings.llamaCommand.line.trim() === "" ? null : settings.llamaCommand;
}

/**
 * The speculation an Auto-offload asks for: the choice, with the draft model's file where one is picked (`draft`
 * needs one: without it, nothing is asked and the screen says so; `auto` prices it when picked).
 */
export function speculativeRequest(settings: Pick<OffloadSettings, "speculative">): SpeculativeRequest | null {
    const {choice, draftPath} = settings.speculative;
    if (choice === "draft" && draftPath == null) return null;
    return {choice, ...((choice === "draft" || choice === "auto") && draftPath != null ? {draftPath} : {})};
}

export const usePlanStore = create<PlanStore>((set) => ({
    settings: DEFAULT_OFFLOAD_SETTINGS,
    run: {status: "idle"},
    loaded: null,
    setSettings: (change) => set((state) => ({settings: {...state.settings, ...change}})),
    setRun: (run) => set({run}),
    progress: (progress) => set((state) => {
        if (state.run.status !== "running" || state.run.taskId !== progress.taskId)
            return {};
        const {plan, ...step} = progress;
        const steps = [...state.run.steps];
        const at = steps.findIndex((candidate) => candidate.step === step.step);
        if (at === -1)
            steps.push(step);
        else
            steps[at] = step;
        // once a plan arrives the engine unloads the model it had and loads this one
        return plan != null ? {run: {...state.run, steps, planned: plan}, loaded: null} : {run: {...state.run, steps}};
    }),
    setLoaded: (loaded) => set({loaded})
}));
