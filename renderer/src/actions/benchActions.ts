import type {BenchExportFormat, BenchStartRequest, BenchStrategy} from "../../../electron/contract/ipc";
import {useBenchStore, type BenchForm} from "../stores/benchStore";
import {getTransport} from "../transport/getTransport";
import {errorMessage} from "../transport/Transport";
import {newId} from "./ids";

/** `"32, 64,128"` → `[32, 64, 128]`; throws a readable message for anything else. */
export function parseLengths(text: string, what: string, min: number): number[] {
    const items = text.split(/[\s,]+/).filter((item) => item !== "");
    const values = items.map(Number);
    if (values.length === 0 || values.some((value) => !Number.isInteger(value) || value < min))
        throw new Error(`${what}: enter whole numbers ≥ ${min}, separated by commas`);
    return [...new Set(values)].sort((a, b) => a - b);
}

/** The request the form describes (the model defaults to the loaded one). */
export function benchRequest(form: BenchForm, benchId: string): BenchStartRequest {
    const percents = parseLengths(form.budgets.replace(/%/g, ""), "Budgets", 1);
    if (percents.some((percent) => percent > 100))
        throw new Error("Budgets: percentages go up to 100");
    if (form.strategies.length === 0)
        throw new Error("Pick at least one strategy");
    return {
        benchId, budgets: percents.map((percent) => ({kind: "percent", percent})),
        promptLengths: parseLengths(form.prompts, "Prompt lengths", 1), genLengths: parseLengths(form.gens, "Generation lengths", 2),
        strategies: form.strategies, repeats: form.repeats, handTuned: form.handTuned
    };
}

export async function refreshBenchList(): Promise<void> {
    try {
        const summaries = await getTransport().request("bench.list");
        const store = useBenchStore.getState();
        store.setSummaries(summaries);
        const running = summaries.find((summary) => summary.status === "running");
        // an answer that left the host before bench.done arrived can still say "running"
        if (running != null)
            store.followRunning(running.id);
    } catch {
        // the host answers once it is up; the list stays as it was
    }
}

/** Shows benchmark `id` below the form (its report, tables and charts). */
export async function openBench(id: string): Promise<void> {
    const store = useBenchStore.getState();
    store.select(id);
    try {
        store.setDetail(await getTransport().request("bench.get", {id}));
    } catch {
        // not written yet (the engine is still profiling): the next finished run brings it
    }
}

export async function startBench(): Promise<void> {
    const store = useBenchStore.getState();
    const benchId = newId("bench");
    try {
        const request = benchRequest(store.form, benchId);
        store.setRun({status: "running", benchId, progress: null, stopping: false});
        store.select(benchId);
        await getTransport().request("bench.start", request);
    } catch (error) {
        store.setRun({status: "failed", benchId, message: errorMessage(error)});
    }
}

export async function stopBench(): Promise<void> {
    const {run, setRun} = useBenchStore.getState();
    if (run.status !== "running")
        return;
    setRun({...run, stopping: true});
    await getTransport().request("bench.stop", {benchId: run.benchId});
}

/** Electron: a save dialog; web mode: a download. Returns where it went, or `null` when cancelled. */
export async function exportBench(id: string, format: BenchExportFormat): Promise<string | null> {
    return await getTransport().saveBenchReport(id, format);
}

export function toggleStrategy(strategy: BenchStrategy): void {
    const {form, setForm} = useBenchStore.getState();
    setForm({strategies: form.strategies.includes(strategy) ? form.strategies.filter((s) => s !== strategy) : [...form.strategies, strategy]});
}
