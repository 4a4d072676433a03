// @vitest-environment jsdom
// The MCP servers' state in the renderer: a list the host cannot give (a failed or refused request) is shown as the
// Tools screen's error, never left as an unhandled rejection of the page; the next list that succeeds clears it.
import {beforeAll, describe, expect, it} from "vitest";
import type {ToolServersState} from "../../../electron/contract/ipc";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import {useToolsStore} from "../stores/toolsStore";
import {fakeBridge} from "../testing/fakeBridge";
import {initTransport} from "../transport/getTransport";
import {refreshTools} from "./toolActions";

const fake = fakeBridge();
beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
});

describe("the MCP servers' list", () => {
    it("shows why it could not be listed, then the servers once it can", async () => {
        fake.handle("tools.list", () => {
            throw new TensorwiseError("engine-stopped", "The engine stopped.");
        });
        await expect(refreshTools()).resolves.toBeUndefined();
        expect(useToolsStore.getState().error).toMatch(/engine stopped/i);
        const state = {servers: []} as unknown as ToolServersState;
        fake.handle("tools.list", () => state);
        await refreshTools();
        expect(useToolsStore.getState().error).toBeNull();
        expect(useToolsStore.getState().state).toEqual(state);
    });
});
