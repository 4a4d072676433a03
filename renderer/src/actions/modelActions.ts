import type {Budget} from "../../../electron/contract/ipc";
import {useModelStore} from "../stores/modelStore";
import {usePlanStore} from "../stores/planStore";
import {useUiStore} from "../stores/uiStore";
import {getTransport} from "../transport/getTransport";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import {errorMessage} from "../transport/Transport";
import {newId} from "./ids";
import {refreshMachine} from "./engineActions";

/** Inspects a model by path (typed, picked in a dialog, or stored by an upload). */
export async function inspectPath(path: string): Promise<void> {
    const {setInspection} = useModelStore.getState();
    const trimmed = path.trim();
    if (trimmed === "")
        return;
    useUiStore.getState().show("model");
    setInspection({status: "inspecting", path: trimmed});
    try {
        setInspection({status: "ready", card: await getTransport().request("model.inspect", {path: trimmed})});
    } catch (error) {
        setInspection({
            status: "failed", path: trimmed, code: error instanceof TensorwiseError ? error.code : "internal", message: errorMessage(error)
        });
    }
}

/** A dropped or picked file: refused unless .gguf, then its path (Electron) or an upload (web) is inspected. */
export async function openModelFile(file: File): Promise<void> {
    const {setInspection} = useModelStore.getState();
    useUiStore.getState().show("model");
    if (!file.name.toLowerCase().endsWith(".gguf")) {
        setInspection({status: "failed", path: file.name, code: "bad-name", message: `${file.name} is not a .gguf file: only GGUF models can be opened.`});
        return;
    }
    let path: string;
    try {
        setInspection({status: "uploading", fileName: file.name, progress: 0});
        path = await getTransport().modelPathForFile(file, (progress) =>
            setInspection({status: "uploading", fileName: file.name, progress}));
    } catch (error) {
        setInspection({status: "failed", path: file.name, code: error instanceof TensorwiseError ? error.code : "internal", message: errorMessage(error)});
        return;
    }
    await inspectPath(path);
}

export async function openModelDialog(): Promise<void> {
    const path = await getTransport().request("dialog.openModel");
    if (path != null)
        await inspectPath(path);
}

/**
 * The one Auto-offload action: profile this machine if its cached profile does not fit (or `refreshProfile`), plan
 * and load, following `task.progress` events; the plan (with its memory estimate) is shown before the weights load.
 */
export async function autoOffload(path: string, options: {refreshProfile?: boolean} = {}): Promise<void> {
    const plan = usePlanStore.getState();
    const taskId = newId("offload");
    const {settings} = plan;
    useUiStore.getState().show("offload");
    plan.setRun({status: "running", taskId, steps: []});
    try {
        const budget: Budget = settings.budget;
        const loaded = await getTransport().request("model.autoOffload", {
            path, budget, taskId, strategy: settings.strategy,
            settings: {contextSize: settings.contextSize, batchSize: settings.batchSize},
            ...(options.refreshProfile === true ? {refreshProfile: true} : {})
        });
        usePlanStore.getState().setLoaded(loaded);
        const run = usePlanStore.getState().run;
        usePlanStore.getState().setRun({status: "done", taskId, steps: run.status === "idle" ? [] : run.steps});
        void refreshMachine();
    } catch (error) {
        const run = usePlanStore.getState().run;
        const steps = run.status === "idle" ? [] : run.steps;
        const cancelled = run.status === "running" && run.cancelling === true && error instanceof TensorwiseError && error.code === "aborted";
        usePlanStore.getState().setRun(cancelled ? {status: "cancelled", taskId, steps}
            : {status: "failed", taskId, steps, message: errorMessage(error), ...(run.status === "running" && run.planned != null ? {planned: run.planned} : {})});
        void refreshMachine();
    }
}

/** Cancels the running Auto-offload before its weights load; the model loaded before stays loaded. */
export async function cancelAutoOffload(): Promise<void> {
    const {run, setRun} = usePlanStore.getState();
    if (run.status !== "running")
        return;
    setRun({...run, cancelling: true});
    await getTransport().request("task.cancel", {taskId: run.taskId});
}

export async function unloadModel(): Promise<void> {
    await getTransport().request("model.unload");
    usePlanStore.getState().setLoaded(null);
    void refreshMachine();
}
