// @vitest-environment jsdom
// A conversation whose message has no text (a hand-edited file, before the host checked files) used to throw while
// rendering and unmount the whole window. The boundary keeps the window and offers a way back.
import {act, useState} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeEach, describe, expect, it, vi} from "vitest";
import type {ChatMessage} from "../../../../electron/contract/ipc";
import {Message} from "../../screens/Chat/components/Message/Message";
import {ErrorBoundary} from "./ErrorBoundary";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

let container: HTMLDivElement;
let root: Root;

beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
    vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
    vi.restoreAllMocks();
});

const broken = {id: "m", role: "assistant", createdAt: 1} as unknown as ChatMessage;
const fine: ChatMessage = {id: "m", role: "assistant", text: "**hello**", createdAt: 1};

/** A window: a sidebar, and a view that shows the broken message until "back" moves on to another. */
function View({onBack}: {onBack: () => void}) {
    const [message, setMessage] = useState(broken);
    return (
        <div>
            <nav data-testid="sidebar">sidebar</nav>
            <ErrorBoundary what="The chat screen" backLabel="Close this conversation" onBack={() => {
                onBack();
                setMessage(fine);
            }}>
                <Message message={message} actions={{}}/>
            </ErrorBoundary>
        </div>
    );
}

describe("ErrorBoundary", () => {
    it("a message without text shows an error panel with a way back; the rest of the window stays", () => {
        const onBack = vi.fn();
        act(() => root.render(<View onBack={onBack}/>));
        expect(container.querySelector("[data-testid=sidebar]")?.textContent).toBe("sidebar");
        const panel = container.querySelector("[data-testid=view-error]");
        expect(panel?.textContent).toContain("The chat screen could not be shown.");
        expect(container.querySelector("[data-testid=view-error-message]")?.textContent).not.toBe("");

        // the way back: leave the broken view, and the panel gives way to what is shown next
        act(() => (container.querySelector("[data-testid=view-error-back]") as HTMLButtonElement).click());
        expect(onBack).toHaveBeenCalledOnce();
        expect(container.querySelector("[data-testid=view-error]")).toBeNull();
        expect(container.textContent).toContain("hello");
    });
});
