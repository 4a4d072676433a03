import type {Budget, ContractError, LoadedModelState} from "../../../electron/contract/ipc";
import {toContractError} from "../../../electron/contract/TensorwiseError";
import {useLibraryStore} from "../stores/libraryStore";
import {useModelStore} from "../stores/modelStore";
import {llamaCommandRequest, speculativeRequest, usePlanStore, type OffloadSettings} from "../stores/planStore";
import {useUiStore} from "../stores/uiStore";
import {getTransport} from "../transport/getTransport";
import {refreshMachine} from "./engineActions";
import {newId} from "./ids";

/** The last part of a path, as the user knows the file. */
function baseName(path: string): string {
    return path.split(/[\\/]/).at(-1) ?? path;
}

/**
 * Inspects a model by path (typed, picked in a dialog, from the library, or stored by an upload). `userFileName` is the
 * user's own file name when `path` is the app's copy of it (a web-mode upload), so errors name the user's file.
 */
export async function inspectPath(path: string, userFileName?: string): Promise<void> {
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
            status: "failed", path: trimmed, fileName: userFileName ?? baseName(trimmed),
            ...(userFileName != null && {copyPath: trimmed}), error: toContractError(error)
        });
    }
    void refreshLibrary();
}

/** A dropped or picked file: refused unless .gguf, then its path (Electron) or an upload (web) is inspected. */
export async function openModelFile(file: File): Promise<void> {
    const {setInspection} = useModelStore.getState();
    useUiStore.getState().show("model");
    const failed = (error: ContractError) => setInspection({status: "failed", path: file.name, fileName: file.name, error});
    if (!file.name.toLowerCase().endsWith(".gguf")) {
        failed({code: "bad-name", message: `${file.name} is not a .gguf file: only GGUF models can be opened.`});
        return;
    }
    let path: string;
    try {
        setInspection({status: "uploading", fileName: file.name, progress: 0});
        path = await getTransport().modelPathForFile(file, (progress) =>
            setInspection({status: "uploading", fileName: file.name, progress}));
    } catch (error) {
        failed(toContractError(error));
        return;
    }
    // web mode opens the app's copy in the models folder; errors should still name the user's file
    await inspectPath(path, getTransport().kind === "web" ? file.name : undefined);
}

export async function openModelDialog(): Promise<void> {
    const path = await getTransport().request("dialog.openModel");
    if (path != null)
        await inspectPath(path);
}

/** Follows a load (`run`) on the Auto-offload screen's steps; the result feeds the placement map and memory panel. */
async function runLoad(taskId: string, run: () => Promise<LoadedModelState>, settings?: OffloadSettings): Promise<boolean> {
    const plan = usePlanStore.getState();
    plan.setRun({status: "running", taskId, steps: [], ...(settings != null && {settings})});
    plan.setLoaded(null);
    try {
        const loaded = await run();
        usePlanStore.getState().setLoaded(loaded);
        const current = usePlanStore.getState().run;
        usePlanStore.getState().setRun({status: "done", taskId, steps: current.status === "idle" ? [] : current.steps, ...(settings != null && {settings})});
        return true;
    } catch (error) {
        const current = usePlanStore.getState().run;
        const steps = current.status === "idle" ? [] : current.steps;
        const contract = toContractError(error);
        const cancelled = current.status === "running" && current.cancelling === true && contract.code === "aborted";
        usePlanStore.getState().setRun(cancelled ? {status: "cancelled", taskId, steps} : {
            status: "failed", taskId, steps, message: contract.message, error: contract,
            ...(current.status === "running" && current.planned != null ? {planned: current.planned} : {})
        });
        // a load refused or cancelled before its weights loaded keeps the model that was loaded: show what the engine holds now
        usePlanStore.getState().setLoaded(await getTransport().request("model.current").catch(() => null));
        return false;
    } finally {
        void refreshMachine();
        void refreshLibrary();
    }
}

/**
 * The one Auto-offload action: profile this machine if its cached profile does not fit (or `refreshProfile`), plan
 * and load, following `task.progress` events; the plan (with its memory estimate) is shown before the weights load.
 */
export async function autoOffload(path: string, options: {refreshProfile?: boolean} = {}): Promise<void> {
    const taskId = newId("offload");
    const {settings} = usePlanStore.getState();
    const budget: Budget = settings.budget;
    const speculative = speculativeRequest(settings);
    const llamaCommand = llamaCommandRequest(settings);
    useUiStore.getState().show("offload");
    await runLoad(taskId, () => getTransport().request("model.autoOffload", {
        path, budget, taskId, strategy: settings.strategy,
        settings: {...(settings.contextSize != null ? {contextSize: settings.contextSize} : {}), batchSize: settings.batchSize, ...settings.knobs},
        ...(options.refreshProfile === true ? {refreshProfile: true} : {}),
        ...(speculative != null ? {speculative} : {}),
        ...(llamaCommand != null ? {llamaCommand} : {})
    }), settings);
}

/** Cancels the running Auto-offload before its weights load; the model loaded before stays loaded. */
export async function cancelAutoOffload(): Promise<void> {
    const {run, setRun} = usePlanStore.getState();
    if (run.status !== "running")
        return;
    setRun({...run, cancelling: true});
    await getTransport().request("task.cancel", {taskId: run.taskId});
}

/** Loads a library model the way it was last loaded; a failure is shown in the library, naming the model's file. */
export async function loadFromLibrary(path: string): Promise<void> {
    useLibraryStore.getState().setFailure(null);
    const taskId = newId("offload");
    let failure: ContractError | null = null;
    const ok = await runLoad(taskId, () => getTransport().request("library.load", {path, taskId}).catch((error: unknown) => {
        failure = toContractError(error);
        throw error;
    }));
    if (!ok && failure != null)
        useLibraryStore.getState().setFailure({fileName: baseName(path), error: failure});
}

/**
 * Loads the loaded model again as it was last loaded (Auto-offload with its budget and strategy, or its GPU layers), with
 * a context of `contextSize` tokens: the planner and the load refuse in their own words when memory would not allow
 * it (the model loaded before stays). Returns that refusal, or `null` once loaded.
 */
export async function reloadWithContextSize(contextSize: number): Promise<string | null> {
    const loaded = usePlanStore.getState().loaded;
    if (loaded == null)
        return "No model is loaded.";
    const {path} = loaded.card;
    const last = useLibraryStore.getState().models.find((model) => model.path === path)?.lastLoad ?? null;
    const taskId = newId("offload");
    const {settings} = usePlanStore.getState();
    let failure: string | null = null;
    await runLoad(taskId, () => {
        const request = last?.name === "load"
            ? getTransport().request("model.load", {path, gpuLayers: last.gpuLayers, settings: {...last.settings, contextSize}, taskId, ...(last.speculative != null && {speculative: last.speculative})})
            : getTransport().request("model.autoOffload", last?.name === "autoOffload"
                ? {path, budget: last.budget, settings: {...last.settings, contextSize}, taskId, ...(last.strategy != null && {strategy: last.strategy}),
                    ...(last.speculative != null && {speculative: last.speculative})}
                : {path, budget: settings.budget, strategy: settings.strategy, settings: {batchSize: settings.batchSize, ...settings.knobs, contextSize}, taskId});
        return request.catch((error: unknown) => {
            failure = toContractError(error).message;
            throw error;
        });
    });
    return failure;
}

/** Ejects the loaded model: its memory is freed; it stays opened and in the library. */
export async function unloadModel(): Promise<void> {
    await getTransport().request("model.unload");
    usePlanStore.getState().setLoaded(null);
    void refreshMachine();
}

export async function refreshLibrary(): Promise<void> {
    try {
        useLibraryStore.getState().setModels(await getTransport().request("library.list"));
    } catch {
        // the host is not reachable yet; the next refresh fills it
    }
    try {
        // last use comes from the recent models just read
        useLibraryStore.getState().setFolders(await getTransport().request("library.files"));
    } catch {
        // as above
    }
}

/** Removes a model from the library; its file stays where it is. */
export async function forgetModel(path: string): Promise<void> {
    useLibraryStore.getState().setModels(await getTransport().request("library.forget", {path}));
}
