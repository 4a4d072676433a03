// @vitest-environment jsdom
// What a user sees when opening or loading fails: the loaded model is still shown as loaded, and the error is kept
// with its code (for the sentence and fix) and names the model's file.
import {beforeAll, beforeEach, describe, expect, it} from "vitest";
import type {LoadedModelState, ModelCard} from "../../../electron/contract/ipc";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import {useLibraryStore} from "../stores/libraryStore";
import {useModelStore} from "../stores/modelStore";
import {usePlanStore} from "../stores/planStore";
import {fakeBridge} from "../testing/fakeBridge";
import {initTransport} from "../transport/getTransport";
import {autoOffload, inspectPath, loadFromLibrary} from "./modelActions";

const fake = fakeBridge();
const card = {path: "/models/tiny.gguf", fileName: "tiny.gguf", name: "tiny", architecture: "llama", fileBytes: 1, tensors: [], quantMix: []} as unknown as ModelCard;
const loaded = {card, placement: {strategy: "oato"}} as unknown as LoadedModelState;

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    fake.handle("machine.describe", () => {
        throw new TensorwiseError("engine-not-running");
    });
    fake.handle("library.list", () => []);
    // the host answers with the model the engine still holds
    fake.handle("model.current", () => loaded);
});

beforeEach(() => {
    usePlanStore.getState().setLoaded(loaded);
    useLibraryStore.getState().setFailure(null);
});

describe("failed opens and loads", () => {
    it("a malformed file keeps its code and the user's file name; the loaded model stays loaded", async () => {
        fake.handle("model.inspect", () => {
            throw new TensorwiseError("bad-magic", "magic is \"hell\", expected \"GGUF\" (at byte 0)");
        });
        await inspectPath("/models/hello.gguf");
        expect(useModelStore.getState().inspection).toEqual({
            status: "failed", path: "/models/hello.gguf", fileName: "hello.gguf",
            error: {code: "bad-magic", message: "magic is \"hell\", expected \"GGUF\" (at byte 0)"}
        });
        expect(usePlanStore.getState().loaded).toBe(loaded);
    });

    it("a load refused by the engine shows its code, then the model the engine still holds", async () => {
        fake.handle("model.autoOffload", () => {
            throw new TensorwiseError("not-enough-memory", "Failed to create context");
        });
        await autoOffload("/models/big.gguf");
        const run = usePlanStore.getState().run;
        expect(run.status === "failed" ? run.error : null).toEqual({code: "not-enough-memory", message: "Failed to create context"});
        expect(usePlanStore.getState().loaded).toBe(loaded);
    });

    it("a failed Load from the library names the model's file", async () => {
        fake.handle("library.load", () => {
            throw new TensorwiseError("not-found", "There is no file at /models/gone.gguf.");
        });
        await loadFromLibrary("/models/gone.gguf");
        expect(useLibraryStore.getState().failure).toEqual({fileName: "gone.gguf", error: {code: "not-found", message: "There is no file at /models/gone.gguf."}});
        expect(usePlanStore.getState().loaded).toBe(loaded);
    });
});
