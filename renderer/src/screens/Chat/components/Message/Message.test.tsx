// @vitest-environment jsdom
// The wait before a reply's first token, as the reply and the sidebar show it: counted from the Send, moving with the
// clock before the engine's first prompt-progress event and while that event's own clock still reads 0 (it is sent
// before the first chunk of the prompt is read) — never a frozen "0.0 ms" — and the same figure in both places.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeAll, beforeEach, describe, expect, it, vi} from "vitest";
import type {Conversation} from "../../../../../../electron/contract/ipc";
import {sendMessage} from "../../../../actions/chatActions";
import {wireEvents} from "../../../../actions/wireEvents";
import {Sidebar} from "../../../../components/Sidebar/Sidebar";
import {useChatStore} from "../../../../stores/chatStore";
import {deferred, fakeBridge} from "../../../../testing/fakeBridge";
import {getTransport, initTransport} from "../../../../transport/getTransport";
import {StreamingMessage} from "./Message";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const conversation: Conversation = {id: "c1", title: "Long prompt", updatedAt: 1, messageCount: 0, messages: [], settings: {maxTokens: 16}};

/** The streaming replies of the chat store, as the chat shows them, beside the app's sidebar. */
function Shown() {
    const streams = useChatStore((state) => state.streams);
    return <>{Object.values(streams).map((stream) => <StreamingMessage key={stream.streamId} stream={stream}/>)}<Sidebar/></>;
}

let container: HTMLDivElement;
let root: Root;

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    wireEvents(getTransport());
});
beforeEach(() => {
    vi.useFakeTimers({toFake: ["performance", "setInterval", "clearInterval"]});
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
    vi.useRealTimers();
});

describe("the wait before a reply's first token", () => {
    it("counts up from the Send in the reply and the sidebar alike, also while the engine's prompt clock reads 0", async () => {
        const held = deferred<never>();
        fake.handle("chat.send", () => held.promise);
        fake.handle("conversations.list", () => []);
        fake.handle("conversations.notices", () => []);
        useChatStore.getState().putConversation(conversation);
        useChatStore.getState().setActive(conversation.id);
        await act(async () => root.render(<Shown/>));
        await act(async () => { void sendMessage("Summarise this long document"); });

        const waited = () => container.querySelector("[data-testid=reply-waited]")?.textContent;
        const sidebar = () => [...container.querySelectorAll("[data-testid=sidebar-activity]")].map((line) => line.textContent);
        const detail = () => container.querySelector("[data-testid=prompt-progress] .progress-labels .muted")?.textContent;

        // before any event from the engine
        await act(async () => { vi.advanceTimersByTime(1500); });
        expect(waited()).toBe("1.50 s");
        expect(sidebar()).toEqual(["Starting a reply · 1.50 s"]);

        // the engine's first event: nothing read yet, its own clock at 0
        const streamId = Object.keys(useChatStore.getState().streams)[0]!;
        await act(async () => fake.emit("chat.prompt", {streamId, conversationId: conversation.id, evaluated: 0, total: 5000, reused: 0, elapsedMs: 0}));
        await act(async () => { vi.advanceTimersByTime(2000); });
        expect(detail()).toBe("0 / 5000 tokens · 0%");
        expect(container.textContent).not.toContain("0.0 ms");
        expect(waited()).toBe("3.50 s");
        expect(sidebar()).toEqual(["Reading the prompt · 0 / 5000 tokens · 3.50 s"]);

        // still no second event: the figure keeps moving
        await act(async () => { vi.advanceTimersByTime(4000); });
        expect(waited()).toBe("7.50 s");
        expect(sidebar()).toEqual(["Reading the prompt · 0 / 5000 tokens · 7.50 s"]);
    });
});
