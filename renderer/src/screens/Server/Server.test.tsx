// @vitest-environment jsdom
// The Server screen while the server starts: the step the host reports, a progress bar that moves with the KV
// measurement, the steps already done, and nothing of it once the server serves.
import {act} from "react";
import {createRoot} from "react-dom/client";
import {beforeAll, describe, expect, it} from "vitest";
import {DEFAULT_SERVER_SETTINGS, type ServerState} from "../../../../electron/contract/server";
import {wireEvents} from "../../actions/wireEvents";
import {fakeBridge} from "../../testing/fakeBridge";
import {getTransport, initTransport} from "../../transport/getTransport";
import {Server} from "./Server";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const starting: ServerState = {
    ...DEFAULT_SERVER_SETTINGS, enabled: true, apiKey: "tw-AbCdEfGhIjKlMnOpQrStUvWxYz012345", clientKeys: [], status: "starting",
    startup: {step: "loading-context", fraction: null, steps: ["loading-context"]}, url: null, modelId: null, error: null, recent: [], served: 0
};

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    wireEvents(getTransport());
});

describe("the Server screen while the server starts", () => {
    it("shows the current step with its progress and the steps done, then the URL once serving", async () => {
        fake.handle("server.get", () => starting);
        const container = document.createElement("div");
        document.body.append(container);
        const root = createRoot(container);
        await act(async () => root.render(<Server/>));
        const startup = () => container.querySelector("[data-testid=server-startup]");
        const bar = () => container.querySelector("[data-testid=server-startup-progress]")!;

        expect(container.querySelector("[data-testid=server-status]")!.textContent).toBe("Starting…");
        expect(startup()!.getAttribute("data-step")).toBe("loading-context");
        expect(bar().textContent).toContain("Loading the model's context for the parallel sequences");
        expect(bar().getAttribute("data-progress")).toBe("indeterminate");
        expect(container.querySelector("[data-testid=server-startup-done]")).toBeNull();

        await act(async () => fake.emit("server.state", {...starting, startup: {step: "measuring-kv", fraction: 0.25, steps: ["loading-context", "measuring-kv"]}}));
        expect(bar().textContent).toContain("Measuring KV swap costs (first start with this model and settings)");
        expect(bar().getAttribute("data-progress")).toBe("25");
        expect(bar().querySelector("[role=progressbar]")!.getAttribute("aria-valuenow")).toBe("25");
        expect(container.querySelector("[data-testid=server-startup-done]")!.textContent).toBe("✓ loading the model's context for the parallel sequences");

        await act(async () => fake.emit("server.state", {...starting, startup: {step: "binding-port", fraction: null, steps: ["loading-context", "measuring-kv", "binding-port"]}}));
        expect(bar().textContent).toContain("Binding the port");
        expect([...container.querySelectorAll("[data-testid=server-startup-done] li")].map((item) => item.textContent))
            .toEqual(["✓ loading the model's context for the parallel sequences", "✓ measuring KV swap costs (first start with this model and settings)"]);

        await act(async () => fake.emit("server.state", {...starting, status: "serving", startup: null, url: "http://127.0.0.1:8080/v1", modelId: "tiny.gguf"}));
        expect(startup()).toBeNull();
        expect(container.querySelector("[data-testid=server-url]")!.textContent).toBe("http://127.0.0.1:8080/v1");
        await act(async () => root.unmount());
    });
});
