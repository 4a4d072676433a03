// @vitest-environment jsdom
// The Server screen's "Connect a client": what each client sets (base URLs, key, model), the key masked until
// revealed, and copy buttons that copy the real key.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeEach, describe, expect, it, vi} from "vitest";
import {DEFAULT_SERVER_SETTINGS, type ServerState} from "../../../../../../electron/contract/server";
import {ConnectClient} from "./ConnectClient";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const KEY = "tw-AbCdEfGhIjKlMnOpQrStUvWxYz012345";
const serving: ServerState = {
    ...DEFAULT_SERVER_SETTINGS, enabled: true, port: 8123, apiKey: KEY, clientKeys: [], status: "serving", startup: null, url: "http://127.0.0.1:8123/v1",
    modelId: "qwen-7b.gguf", error: null, recent: [], served: 0
};

let container: HTMLDivElement;
let root: Root;
let copied: string[];

beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
    copied = [];
    Object.defineProperty(navigator, "clipboard", {configurable: true, value: {writeText: vi.fn(async (text: string) => {
        copied.push(text);
    })}});
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
});

const byTestId = (id: string) => container.querySelector(`[data-testid="${id}"]`)!;
const snippet = (id: string) => container.querySelector(`[data-testid="connect-snippet"][data-id="${id}"]`)!;

async function click(element: Element): Promise<void> {
    await act(async () => {
        (element as HTMLElement).click();
    });
}

describe("Connect a client", () => {
    it("shows each client's base URL and model, with the key masked everywhere until revealed", async () => {
        act(() => root.render(<ConnectClient server={serving}/>));
        expect(byTestId("connect-openai-url").textContent).toBe("http://127.0.0.1:8123/v1");
        expect(byTestId("connect-anthropic-url").textContent).toBe("http://127.0.0.1:8123");
        expect(byTestId("connect-model").textContent).toBe("qwen-7b.gguf");
        expect(container.textContent).not.toContain(KEY);
        expect(container.textContent).not.toContain(KEY.slice(3, -4));
        expect(byTestId("connect-key").textContent).toMatch(/^tw-•+2345$/);
        expect(snippet("openai-python").textContent).toContain("OpenAI(base_url=\"http://127.0.0.1:8123/v1\", api_key=\"tw-");
        expect(snippet("openai-js").textContent).toContain("new OpenAI({baseURL: \"http://127.0.0.1:8123/v1\"");
        expect(snippet("anthropic-python").textContent).toContain("anthropic.Anthropic(base_url=\"http://127.0.0.1:8123\"");
        expect(snippet("claude-code").textContent).toMatch(/ANTHROPIC_BASE_URL="http:\/\/127\.0\.0\.1:8123"[\s\S]*ANTHROPIC_AUTH_TOKEN="tw-•+2345"[\s\S]*ANTHROPIC_MODEL="qwen-7b\.gguf"/);
        await click(byTestId("connect-reveal"));
        expect(byTestId("connect-key").textContent).toBe(KEY);
        expect(snippet("claude-code").textContent).toContain(`ANTHROPIC_AUTH_TOKEN="${KEY}"`);
        await click(byTestId("connect-reveal"));
        expect(container.textContent).not.toContain(KEY);
    });

    it("copies the real key and each snippet with it, even while the key is masked", async () => {
        act(() => root.render(<ConnectClient server={serving}/>));
        await click(byTestId("connect-copy-key"));
        expect(copied).toEqual([KEY]);
        await click(snippet("claude-code").querySelector("[data-testid=connect-copy-snippet]")!);
        expect(copied[1]).toContain(`export ANTHROPIC_AUTH_TOKEN="${KEY}"`);
        await click(snippet("openai-python").querySelector("[data-testid=connect-copy-snippet]")!);
        expect(copied[2]).toContain(`api_key="${KEY}"`);
        expect(container.querySelectorAll("[data-testid=connect-snippet]")).toHaveLength(4);
    });

    it("without a required key shows the placeholder every SDK accepts, and before serving the address the server will take", () => {
        act(() => root.render(<ConnectClient server={{...serving, requireKey: false, status: "off", url: null, modelId: null, bindAddress: "0.0.0.0", port: 9000}}/>));
        expect(container.querySelector("[data-testid=connect-reveal]")).toBeNull();
        expect(byTestId("connect-key").textContent).toBe("not-needed");
        expect(container.textContent).not.toContain(KEY);
        expect(byTestId("connect-openai-url").textContent).toBe("http://127.0.0.1:9000/v1");
        expect(byTestId("connect-model").textContent).toBe("<model id>");
    });
});
