import {create} from "zustand";
import type {BenchDetail, BenchProgress, BenchStrategy, BenchSummary} from "../../../electron/contract/ipc";

/** The Benchmark form as typed (lists stay text until Start parses them). */
export type BenchForm = {
    /** Percentages of the weights, comma-separated. */
    budgets: string;
    prompts: string;
    gens: string;
    strategies: BenchStrategy[];
    repeats: number;
    handTuned: boolean;
};

/** Modest defaults: a small model finishes in about a minute on a 2-core machine. */
export const DEFAULT_BENCH_FORM: BenchForm = {
    budgets: "50", prompts: "32, 64, 128", gens: "16, 32", strategies: ["layers", "optimal"], repeats: 1, handTuned: false
};

/** The benchmark this window started or follows. */
export type BenchRunState =
    | {status: "idle"}
    | {status: "running"; benchId: string; progress: BenchProgress | null; stopping: boolean}
    | {status: "failed"; benchId: string | null; message: string};

export type BenchStore = {
    form: BenchForm;
    run: BenchRunState;
    summaries: BenchSummary[];
    /** The report shown below the form: the running benchmark's, or a past one picked from the list. */
    selectedId: string | null;
    detail: BenchDetail | null;
    setForm(change: Partial<BenchForm>): void;
    /** Benchmarks that ended (done or failed) while this window watched: never followed as running again. */
    finished: ReadonlySet<string>;
    setRun(run: BenchRunState): void;
    /** Records that `benchId` ended, with the state to show. */
    finish(benchId: string, run: BenchRunState): void;
    /** Follows `benchId` as running (a list answer said so), unless something runs already or it has ended. */
    followRunning(benchId: string): void;
    /** A `bench.progress` event of the benchmark being followed. */
    progress(progress: BenchProgress): void;
    setSummaries(summaries: BenchSummary[]): void;
    select(id: string | null): void;
    setDetail(detail: BenchDetail | null): void;
};

export const useBenchStore = create<BenchStore>((set) => ({
    form: DEFAULT_BENCH_FORM,
    run: {status: "idle"},
    summaries: [],
    selectedId: null,
    detail: null,
    setForm: (change) => set((state) => ({form: {...state.form, ...change}})),
    finished: new Set(),
    setRun: (run) => set({run}),
    finish: (benchId, run) => set((state) => ({run, finished: new Set(state.finished).add(benchId)})),
    followRunning: (benchId) => set((state) =>
        state.run.status === "running" || state.finished.has(benchId) ? {} : {run: {status: "running", benchId, progress: null, stopping: false}}),
    progress: (progress) => set((state) => {
        if (state.run.status === "running" && state.run.benchId === progress.benchId)
            return {run: {...state.run, progress}};
        // a benchmark started elsewhere (another window, or before a reload): follow it — unless it already ended
        // (a late answer or event must not bring a finished run back)
        if (state.run.status !== "running" && !state.finished.has(progress.benchId))
            return {run: {status: "running", benchId: progress.benchId, progress, stopping: false}};
        return {};
    }),
    setSummaries: (summaries) => set({summaries}),
    select: (selectedId) => set((state) => ({selectedId, detail: state.detail?.summary.id === selectedId ? state.detail : null})),
    setDetail: (detail) => set((state) => (detail == null || detail.summary.id === state.selectedId ? {detail} : {}))
}));
