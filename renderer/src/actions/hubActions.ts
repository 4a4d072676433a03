import {toContractError} from "../../../electron/contract/TensorwiseError";
import {useHubStore} from "../stores/hubStore";
import {useModelStore} from "../stores/modelStore";
import {useUiStore} from "../stores/uiStore";
import {getTransport} from "../transport/getTransport";
import {newId} from "./ids";
import {refreshLibrary} from "./modelActions";

/** Searches the hub for GGUF repositories matching the query. */
export async function searchHub(query: string): Promise<void> {
    const store = useHubStore.getState();
    store.setQuery(query);
    if (query.trim() === "") return;
    store.setSearch({status: "running", taskId: null, detail: null});
    try {
        useHubStore.getState().setSearch({status: "ready", result: await getTransport().request("hub.search", {query: query.trim()})});
    } catch (error) {
        useHubStore.getState().setSearch({status: "failed", error: toContractError(error)});
    }
}

/** Lists a repository's quants, each planned on this machine from its header; `profile` measures this machine first where needed. */
export async function listQuants(repo: string, profile = false): Promise<void> {
    const taskId = newId("quants");
    useHubStore.getState().setQuants(repo, {status: "running", taskId, detail: null});
    try {
        const result = await getTransport().request("hub.quants", {repo, profile, taskId});
        // a newer choice of repository wins over this answer
        if (useHubStore.getState().repo === repo) useHubStore.getState().setQuants(repo, {status: "ready", result});
    } catch (error) {
        if (useHubStore.getState().repo === repo) useHubStore.getState().setQuants(repo, {status: "failed", error: toContractError(error)});
    }
}

/** Downloads one quant into the app's models folder; once it is there, the Model screen shows its card. */
export async function downloadQuant(repo: string, quant: string): Promise<void> {
    const taskId = newId("pull");
    useHubStore.getState().setDownload({status: "downloading", repo, quant, taskId, progress: null, detail: null});
    try {
        const card = await getTransport().request("hub.pull", {repo, quant, taskId});
        useHubStore.getState().setDownload({status: "done", repo, quant, card});
        useModelStore.getState().setInspection({status: "ready", card});
        useUiStore.getState().show("model");
    } catch (error) {
        useHubStore.getState().setDownload({status: "failed", repo, quant, error: toContractError(error)});
    }
    void refreshLibrary();
}

/** Writes (once) and opens the demo model: random weights, so it answers gibberish, but every screen works with it. */
export async function makeDemoModel(): Promise<void> {
    const {setInspection} = useModelStore.getState();
    useUiStore.getState().show("model");
    setInspection({status: "inspecting", path: "demo-random-weights.gguf"});
    try {
        setInspection({status: "ready", card: await getTransport().request("model.makeDemo")});
    } catch (error) {
        setInspection({status: "failed", path: "demo-random-weights.gguf", fileName: "demo-random-weights.gguf", error: toContractError(error)});
    }
    void refreshLibrary();
}

/** Stops a running download or quant listing (a download's partial file is kept: downloading again resumes). */
export async function cancelHubTask(taskId: string): Promise<void> {
    await getTransport().request("task.cancel", {taskId});
}
