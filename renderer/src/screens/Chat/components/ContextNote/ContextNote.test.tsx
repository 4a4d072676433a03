// @vitest-environment jsdom
// What the chat says when a reply's prompt left out earlier messages, and the reload it offers: through the model's
// last load (its budget and strategy kept) with a larger context, the load's own refusal shown; and the chat's
// "When the context is full" setting saved as the host's name for it.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeAll, beforeEach, describe, expect, it} from "vitest";
import type {ChatMessage, LoadedModelState, RequestArg, RecentModel} from "../../../../../../electron/contract/ipc";
import {TensorwiseError} from "../../../../../../electron/contract/TensorwiseError";
import {useChatStore} from "../../../../stores/chatStore";
import {useLibraryStore} from "../../../../stores/libraryStore";
import {usePlanStore} from "../../../../stores/planStore";
import {fakeBridge} from "../../../../testing/fakeBridge";
import {initTransport} from "../../../../transport/getTransport";
import {ChatSettingsPanel} from "../ChatSettingsPanel/ChatSettingsPanel";
import {Message} from "../Message/Message";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const path = "/models/tiny.gguf";
/** A loaded model with a 1024-token context, trained for `trained`: only the fields the note reads are real. */
const loadedWith = (trained: number | null): LoadedModelState =>
    ({card: {path, fileName: "tiny.gguf", contextLength: trained}, settings: {contextSize: 1024}, loadId: "l1"}) as unknown as LoadedModelState;
const reply = (leftOutMessages?: number): ChatMessage => ({
    id: "a1", role: "assistant", text: "ok", createdAt: 1, ...(leftOutMessages != null && {leftOutMessages})
});

let container: HTMLDivElement;
let root: Root;

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
});
beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
    useLibraryStore.getState().setModels([{
        path, fileName: "tiny.gguf", name: null, architecture: "llama", fileBytes: 1, openedAt: 1, loadedAt: 1,
        lastLoad: {name: "autoOffload", budget: {kind: "mib", mib: 900}, settings: {contextSize: 1024, batchSize: 256}, strategy: "oato"}
    } satisfies RecentModel]);
});
afterEach(async () => {
    await act(async () => root.unmount());
    container.remove();
});

const text = (testId: string): string | null => container.querySelector(`[data-testid=${testId}]`)?.textContent ?? null;

describe("the left-out note and its reload", () => {
    it("says how many earlier messages the model did not see, and nothing on a reply that saw them all", async () => {
        usePlanStore.getState().setLoaded(loadedWith(1024));
        await act(async () => root.render(<><Message message={reply(12)} actions={{}}/><Message message={{...reply(), id: "a2"}} actions={{}}/></>));
        expect(text("left-out-note")).toBe("12 earlier messages were outside the model's context");
        expect(container.querySelectorAll("[data-testid=context-note]")).toHaveLength(1);
        // the loaded context already is the trained one: nothing larger to offer
        expect(text("reload-larger-context")).toBeNull();
    });

    it("reloads through the model's last Auto-offload with twice the context, and shows the load's refusal in its words", async () => {
        usePlanStore.getState().setLoaded(loadedWith(32768));
        const asked: RequestArg<"model.autoOffload">[] = [];
        fake.handle("model.autoOffload", (arg) => {
            asked.push(arg);
            throw new TensorwiseError("not-enough-memory", "The KV cache of a 2048-token context needs 64 MiB more than the budget.");
        });
        fake.handle("model.current", () => loadedWith(32768));
        await act(async () => root.render(<Message message={reply(1)} actions={{}}/>));
        expect(text("left-out-note")).toBe("1 earlier message was outside the model's context");
        const button = container.querySelector<HTMLButtonElement>("[data-testid=reload-larger-context]")!;
        expect(button.textContent).toBe("Reload with a 2048-token context");
        await act(async () => button.click());
        await act(async () => new Promise((resolve) => setTimeout(resolve, 0)));
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({path, budget: {kind: "mib", mib: 900}, strategy: "oato", settings: {contextSize: 2048, batchSize: 256}});
        expect(text("reload-refused")).toBe("The KV cache of a 2048-token context needs 64 MiB more than the budget.");
    });

    it("offers the model's trained context when doubling would pass it", async () => {
        usePlanStore.getState().setLoaded(loadedWith(1536));
        await act(async () => root.render(<Message message={reply(4)} actions={{}}/>));
        expect(text("reload-larger-context")).toBe("Reload with a 1536-token context");
    });
});

describe("the chat's 'When the context is full' setting", () => {
    it("shows the default for a conversation that never chose, and saves the chosen policy by its name", async () => {
        const saved: RequestArg<"conversations.setSettings">[] = [];
        fake.handle("conversations.setSettings", (arg) => {
            saved.push(arg);
            return {id: arg.id, title: "t", updatedAt: 1, messageCount: 0, messages: [], settings: arg.settings};
        });
        useChatStore.getState().putConversation({id: "c1", title: "t", updatedAt: 1, messageCount: 0, messages: [], settings: {temperature: 0.2}});
        await act(async () => root.render(<ChatSettingsPanel conversationId="c1" settings={{temperature: 0.2}} onClose={() => {}}/>));
        const select = container.querySelector<HTMLSelectElement>("[data-testid=setting-contextOverflow]")!;
        expect(select.value).toBe("truncateMiddle");
        expect([...select.options].map((option) => option.value)).toEqual(["truncateMiddle", "rollingWindow", "stop"]);
        await act(async () => {
            select.value = "stop";
            select.dispatchEvent(new Event("change", {bubbles: true}));
        });
        expect(saved).toEqual([{id: "c1", settings: {temperature: 0.2, contextOverflow: "stop"}}]);
    });
});
