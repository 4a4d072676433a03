// @vitest-environment jsdom
// The stale-answer guard: a request answer that left the host before a newer engine.state event must not overwrite it.
import {beforeAll, describe, expect, it} from "vitest";
import type {EngineState} from "../../../electron/contract/ipc";
import {useEngineStore} from "../stores/engineStore";
import {deferred, fakeBridge} from "../testing/fakeBridge";
import {initTransport} from "../transport/getTransport";
import {bootstrap} from "./bootstrap";
import {restartEngine} from "./engineActions";

const fake = fakeBridge();

beforeAll(() => {
    window.tensorwise = fake.bridge;
    for (const name of ["conversations.list", "conversations.notices", "bench.list"] as const) fake.handle(name, () => []);
    fake.handle("model.current", () => null);
});

/** Resolves after every pending promise callback has run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("engine state answers that raced a newer event", () => {
    it("bootstrap: an engine.state answer older than an event that arrived meanwhile is dropped", async () => {
        const answer = deferred<EngineState>();
        fake.handle("engine.state", () => answer.promise);
        bootstrap();
        await settle();
        expect(fake.requests).toContain("engine.state");
        fake.emit("engine.state", {state: "ready"});
        answer.resolve({state: "starting"});
        await settle();
        expect(useEngineStore.getState().engine).toEqual({state: "ready"});
        // the rest of the bootstrap went on
        await settle();
        expect(fake.requests).toEqual(expect.arrayContaining(["conversations.list", "bench.list", "model.current"]));
    });

    it("restart: the engine.restart answer does not overwrite a newer engine.state event", async () => {
        initTransport();
        fake.emit("engine.state", {state: "crashed", reason: "killed", at: 1});
        const answer = deferred<EngineState>();
        fake.handle("engine.restart", () => answer.promise);
        const restarting = restartEngine();
        await settle();
        expect(useEngineStore.getState().restarting).toBe(true);
        // the host reloaded the model and said so before its restart answer arrived
        fake.emit("engine.state", {state: "starting"});
        fake.emit("engine.state", {state: "ready"});
        answer.resolve({state: "idle"});
        await restarting;
        expect(useEngineStore.getState().engine).toEqual({state: "ready"});
        expect(useEngineStore.getState().restarting).toBe(false);
    });

    it("restart: with no event meanwhile, the answer is applied", async () => {
        fake.emit("engine.state", {state: "crashed", reason: "killed", at: 2});
        fake.handle("engine.restart", () => ({state: "idle"}));
        await restartEngine();
        expect(useEngineStore.getState().engine).toEqual({state: "idle"});
    });
});
