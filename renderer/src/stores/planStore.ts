import {create} from "zustand";
import type {Budget, ContractError, LoadedModelState, PlacementStrategy, TaskProgress} from "../../../electron/contract/ipc";
import {DEFAULT_RUNTIME_SETTINGS} from "../../../electron/contract/settings";

export type OffloadSettings = {
    budget: Budget;
    contextSize: number;
    batchSize: number;
    strategy: PlacementStrategy;
};

/** The current placement job: running with its steps, done, or failed. */
export type OffloadRun =
    | {status: "idle"}
    | {status: "running"; taskId: string; steps: TaskProgress[]}
    | {status: "done"; taskId: string; steps: TaskProgress[]}
    | {status: "failed"; taskId: string; steps: TaskProgress[]; message: string; error?: ContractError};

export type PlanStore = {
    settings: OffloadSettings;
    run: OffloadRun;
    loaded: LoadedModelState | null;
    setSettings(change: Partial<OffloadSettings>): void;
    setRun(run: OffloadRun): void;
    /** A `task.progress` event: updates the running task's step (same step name replaces, new one appends). */
    progress(progress: TaskProgress): void;
    setLoaded(loaded: LoadedModelState | null): void;
};

export const DEFAULT_OFFLOAD_SETTINGS: OffloadSettings = {
    budget: {kind: "auto"}, contextSize: DEFAULT_RUNTIME_SETTINGS.contextSize, batchSize: DEFAULT_RUNTIME_SETTINGS.batchSize, strategy: "optimal"
};

export const usePlanStore = create<PlanStore>((set) => ({
    settings: DEFAULT_OFFLOAD_SETTINGS,
    run: {status: "idle"},
    loaded: null,
    setSettings: (change) => set((state) => ({settings: {...state.settings, ...change}})),
    setRun: (run) => set({run}),
    progress: (progress) => set((state) => {
        if (state.run.status !== "running" || state.run.taskId !== progress.taskId)
            return {};
        const steps = [...state.run.steps];
        const at = steps.findIndex((step) => step.step === progress.step);
        if (at === -1)
            steps.push(progress);
        else
            steps[at] = progress;
        return {run: {...state.run, steps}};
    }),
    setLoaded: (loaded) => set({loaded})
}));
