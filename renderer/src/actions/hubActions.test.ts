// @vitest-environment jsdom
// "Get a model" in the renderer: download progress reaches only the download it belongs to, a finished download opens
// the model's card, a failure keeps its code, and a slow quant list for a repository the user has left is dropped.
import {beforeAll, describe, expect, it} from "vitest";
import type {HubQuantList, ModelCard} from "../../../electron/contract/ipc";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import {useHubStore} from "../stores/hubStore";
import {useModelStore} from "../stores/modelStore";
import {useUiStore} from "../stores/uiStore";
import {deferred, fakeBridge} from "../testing/fakeBridge";
import {getTransport, initTransport} from "../transport/getTransport";
import {downloadQuant, listQuants, searchHub} from "./hubActions";
import {wireEvents} from "./wireEvents";

const fake = fakeBridge();
const card = {path: "/data/models/m-Q4_K_M.gguf", fileName: "m-Q4_K_M.gguf", name: "m", architecture: "llama", fileBytes: 1, tensors: [], quantMix: []} as unknown as ModelCard;
const list = (repo: string): HubQuantList => ({repo, revision: "main", workload: {promptTokens: 512, genTokens: 128}, quants: []});

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    wireEvents(getTransport());
    fake.handle("library.list", () => []);
});

describe("Get a model", () => {
    it("shows a download's own progress, then opens the downloaded model's card on the Model screen", async () => {
        const answer = deferred<ModelCard>();
        let taskId = "";
        fake.handle("hub.pull", (arg) => {
            taskId = arg.taskId;
            return answer.promise;
        });
        const pulling = downloadQuant("org/m-GGUF", "Q4_K_M");
        fake.emit("task.progress", {taskId, step: "download", progress: 0.4, detail: "m-Q4_K_M.gguf: 12 s left"});
        fake.emit("task.progress", {taskId: "another-task", step: "download", progress: 0.9, detail: "not ours"});
        expect(useHubStore.getState().download).toMatchObject({status: "downloading", progress: 0.4, detail: "m-Q4_K_M.gguf: 12 s left"});
        answer.resolve(card);
        await pulling;
        expect(useHubStore.getState().download).toMatchObject({status: "done", card});
        expect(useModelStore.getState().inspection).toEqual({status: "ready", card});
        expect(useUiStore.getState().screen).toBe("model");
    });

    it("keeps a failed download's code and sentence, and a failed search's", async () => {
        fake.handle("hub.pull", () => {
            throw new TensorwiseError("hub-error", "org/m-GGUF: m-Q4_K_M.gguf: the downloaded file's sha256 is … the download was deleted");
        });
        await downloadQuant("org/m-GGUF", "Q4_K_M");
        expect(useHubStore.getState().download).toMatchObject({status: "failed", error: {code: "hub-error", message: expect.stringContaining("sha256")}});
        fake.handle("hub.search", () => {
            throw new TensorwiseError("hub-error", "the search for \"x\": cannot reach https://huggingface.co (ENOTFOUND).");
        });
        await searchHub("x");
        expect(useHubStore.getState().search).toMatchObject({status: "failed", error: {code: "hub-error"}});
    });

    it("drops a quant list that arrives after the user chose another repository", async () => {
        const slow = deferred<HubQuantList>();
        fake.handle("hub.quants", (arg) => arg.repo === "org/slow" ? slow.promise : list(arg.repo));
        const first = listQuants("org/slow");
        await listQuants("org/fast");
        slow.resolve(list("org/slow"));
        await first;
        expect(useHubStore.getState()).toMatchObject({repo: "org/fast", quants: {status: "ready", result: {repo: "org/fast"}}});
    });
});
