// @vitest-environment jsdom
// Tool calls in the chat as a user sees them: a round's calls pushed as chat.message appear inline with their
// arguments and Approve / Always / Deny while the reply waits, the decision goes to the host with the call's id, the
// next round streams as a new message; a result that is markup is shown as text (never run), only raster images are
// shown, a call left waiting by an ended reply says "not run" with no buttons, the footer shows the tools' tokens.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeAll, beforeEach, describe, expect, it} from "vitest";
import type {ChatMessage, Conversation, RequestArg, ToolCallRecord} from "../../../../../../electron/contract/ipc";
import {wireEvents} from "../../../../actions/wireEvents";
import {useChatStore} from "../../../../stores/chatStore";
import {fakeBridge} from "../../../../testing/fakeBridge";
import {getTransport, initTransport} from "../../../../transport/getTransport";
import {Chat} from "../../Chat";
import {fromFormText, EMPTY_FORM} from "../../../Tools/components/ServerForm/serverFormText";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const call = (over: Partial<ToolCallRecord> = {}): ToolCallRecord => ({id: "call_1", server: "files", tool: "list_allowed_directories", arguments: "{}", state: "pending", ...over});
const round = (calls: ToolCallRecord[], over: Partial<ChatMessage> = {}): ChatMessage =>
    ({id: "r1", role: "assistant", text: "", createdAt: 2, toolCalls: calls, toolTokens: 312, prompt: {tokens: 400, reused: 0},
        timing: {promptTokens: 400, generatedTokens: 9, ttftMs: 10, tpotMs: 5, totalMs: 50}, ...over});
const conversation: Conversation = {id: "c1", title: "Files", updatedAt: 1, messageCount: 1, messages: [{id: "u1", role: "user", text: "Which folders?", createdAt: 1}]};

let container: HTMLDivElement;
let root: Root;
const decisions: RequestArg<"chat.decideTool">[] = [];

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    wireEvents(getTransport());
    fake.handle("conversations.list", () => []);
    fake.handle("conversations.notices", () => []);
    fake.handle("conversations.get", () => conversation);
    fake.handle("tools.list", () => ({servers: [], notices: []}));
    fake.handle("chat.decideTool", (arg) => {
        decisions.push(arg);
    });
});
beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
    decisions.length = 0;
    useChatStore.setState({conversations: {c1: conversation}, activeId: "c1", streams: {}, errors: {}});
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
});

const byTestId = (id: string) => [...container.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

describe("tool calls in the chat", () => {
    it("a waiting call shows its arguments and the three answers; the answer goes to the host; the next round streams as its own message", async () => {
        await act(async () => root.render(<Chat/>));
        act(() => useChatStore.getState().startStream("s1", "c1"));
        act(() => fake.emit("chat.message", {streamId: "s1", conversationId: "c1", message: round([call({arguments: "{\"path\": \"/tmp\"}"})])}));
        expect(byTestId("tool-call")[0]!.dataset.state).toBe("pending");
        expect(byTestId("tool-call-state")[0]!.textContent).toBe("waiting for your approval");
        expect(byTestId("tool-call-args")[0]!.textContent).toBe("{\n  \"path\": \"/tmp\"\n}");
        // while it waits, no "typing" placeholder pretends the model writes
        expect(byTestId("message-streaming")).toHaveLength(0);
        expect(byTestId("message-tool-tokens")[0]!.textContent).toBe("tools 312");
        await act(async () => byTestId("tool-approve")[0]!.click());
        expect(decisions).toEqual([{streamId: "s1", callId: "call_1", decision: "approve"}]);
        act(() => fake.emit("chat.message", {streamId: "s1", conversationId: "c1", message: round([call({state: "running", approval: "user"})])}));
        expect(byTestId("tool-approve")).toHaveLength(0);
        act(() => fake.emit("chat.message", {streamId: "s1", conversationId: "c1",
            message: round([call({state: "done", approval: "user", ms: 12, result: {isError: false, parts: [{type: "text", text: "Allowed directories:\n/tmp/x"}], structured: null, capped: null}})])}));
        act(() => fake.emit("chat.delta", {streamId: "s1", conversationId: "c1", messageId: "r2", text: "You may read", elapsedMs: 5, tokens: 3}));
        expect(byTestId("message-streaming")[0]!.textContent).toContain("You may read");
        expect(byTestId("tool-call-result")[0]!.textContent).toContain("Allowed directories:");
        act(() => fake.emit("chat.done", {streamId: "s1", conversationId: "c1", message: {id: "r2", role: "assistant", text: "You may read /tmp/x.", createdAt: 3}}));
        expect(useChatStore.getState().conversations.c1!.messages.map((message) => message.id)).toEqual(["u1", "r1", "r2"]);
    });

    it("Always and Deny send their decisions", async () => {
        await act(async () => root.render(<Chat/>));
        act(() => useChatStore.getState().startStream("s2", "c1"));
        act(() => fake.emit("chat.message", {streamId: "s2", conversationId: "c1", message: round([call(), call({id: "call_2"})])}));
        await act(async () => byTestId("tool-always")[0]!.click());
        await act(async () => byTestId("tool-deny")[1]!.click());
        expect(decisions.map((decision) => [decision.callId, decision.decision])).toEqual([["call_1", "always"], ["call_2", "deny"]]);
    });

    it("markup in a result stays text, an SVG is never an image, a call of an ended reply was not run", async () => {
        const message = round([
            call({state: "done", result: {isError: false, structured: null, capped: "200,000 characters of text, cut to 65,536 characters", parts: [
                {type: "text", text: "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"},
                {type: "image", mimeType: "image/png", data: PNG},
                {type: "image", mimeType: "image/svg+xml" as "image/png", data: "PHN2Zz4="}
            ]}}),
            call({id: "call_2"})
        ]);
        useChatStore.setState({conversations: {c1: {...conversation, messages: [...conversation.messages, message]}}});
        const title = document.title;
        await act(async () => root.render(<Chat/>));
        const result = byTestId("tool-call-result")[0]!;
        expect(result.querySelector("script")).toBeNull();
        expect(result.querySelectorAll("img")).toHaveLength(1);
        expect(result.querySelector("img")!.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
        expect(result.textContent).toContain("<script>document.title='pwned'</script>");
        expect(result.textContent).toContain("An image of type image/svg+xml is not shown.");
        expect(byTestId("tool-call-capped")[0]!.textContent).toBe("cut: 200,000 characters of text, cut to 65,536 characters");
        expect(document.title).toBe(title);
        expect(byTestId("tool-call-state")[1]!.textContent).toBe("not run");
        expect(byTestId("tool-approve")).toHaveLength(0);
    });
});

describe("the server form's text", () => {
    it("reads one argument per line, NAME=value and Name: value lines, and refuses a line it cannot read by its number", () => {
        expect(fromFormText({...EMPTY_FORM, name: "files", command: "npx", args: "-y\n@modelcontextprotocol/server-filesystem\n/tmp/a b\n", env: "A=1\nB = two=2"}, []))
            .toEqual({name: "files", enabled: true, callTimeoutSeconds: 60, alwaysAllow: [],
                launch: {transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/a b"], env: {A: "1", B: "two=2"}, cwd: null}});
        expect(fromFormText({...EMPTY_FORM, name: "r", transport: "http", url: "http://127.0.0.1:3001/mcp", headers: "Authorization: Bearer x:y"}, ["t"]).launch)
            .toEqual({transport: "http", url: "http://127.0.0.1:3001/mcp", headers: {Authorization: "Bearer x:y"}});
        expect(() => fromFormText({...EMPTY_FORM, name: "files", command: "npx", env: "A=1\nTOKEN"}, [])).toThrow('Line 2 of the environment has no "=" after a name.');
    });
});
