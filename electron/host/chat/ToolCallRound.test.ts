/**
 * One round of tool calls, with a recording runner in place of the MCP servers (the servers themselves are tested in
 * electron/host/tools/): nothing runs before the user answers, answers come in any order and the calls still run in
 * the model's, Always covers the later calls of that tool unless they were answered, a call the chat did not offer or
 * with arguments that are not a JSON object never runs, and a stop ends waiting and running calls.
 */
import {describe, expect, it} from "vitest";
import type {ToolCallRecord, ToolRef} from "../../contract/tools.js";
import type {ResolvedTools} from "../tools/McpServers.js";
import {ToolCallRound, type ToolRunner} from "./ToolCallRound.js";

const tools: ResolvedTools = {
    tools: [],
    refs: new Map<string, ToolRef>([["read", {server: "files", tool: "read"}], ["write", {server: "files", tool: "write"}]])
};

function recording(options: {always?: string[]; hang?: boolean} = {}) {
    const ran: string[] = [];
    const always = new Set(options.always ?? []);
    const runner: ToolRunner = {
        alwaysAllowed: (ref) => always.has(ref.tool),
        allowAlways: async (ref) => {
            always.add(ref.tool);
        },
        call: async (ref, args, signal) => {
            ran.push(`${ref.tool} ${JSON.stringify(args)}`);
            if (options.hang === true)
                await new Promise((resolve) => signal.addEventListener("abort", resolve, {once: true}));
            return signal.aborted ? {stopped: true, ms: 1} : {result: {isError: false, parts: [{type: "text", text: "ok"}], structured: null, capped: null}, ms: 1};
        }
    };
    return {runner, ran};
}

const states = (calls: ToolCallRecord[]) => calls.map((call) => call.state);
const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("a round of tool calls", () => {
    it("runs nothing before the user answers; answers in any order, runs in the model's order", async () => {
        const {runner, ran} = recording();
        const seen: string[][] = [];
        const round = new ToolCallRound([{id: "a", name: "read", arguments: "{\"p\": 1}"}, {id: "b", name: "write", arguments: "{}"}], tools, runner,
            async (calls) => void seen.push(states(calls)));
        const running = round.run();
        await tick();
        expect(ran).toEqual([]);
        expect(states(round.calls)).toEqual(["pending", "pending"]);
        round.decide("b", "deny");
        await tick();
        expect(ran, "the second answer waits for the first call").toEqual([]);
        round.decide("a", "approve");
        await running;
        expect(ran).toEqual(["read {\"p\":1}"]);
        expect(states(round.calls)).toEqual(["done", "denied"]);
        expect(round.calls[0]!.approval).toBe("user");
        expect(seen).toEqual([["running", "pending"], ["done", "pending"], ["done", "denied"]]);
        expect(() => round.decide("a", "deny")).toThrow(/not waiting for a decision/);
    });

    it("Always runs that tool's later calls without asking, unless the user answered them", async () => {
        const {runner, ran} = recording();
        const round = new ToolCallRound([{id: "a", name: "read", arguments: "{}"}, {id: "b", name: "read", arguments: "{\"n\": 2}"},
            {id: "c", name: "read", arguments: "{\"n\": 3}"}], tools, runner, async () => {});
        const running = round.run();
        round.decide("c", "deny");
        round.decide("a", "always");
        await running;
        expect(ran).toEqual(["read {}", "read {\"n\":2}"]);
        expect(round.calls.map((call) => [call.state, call.approval])).toEqual([["done", "user"], ["done", "always"], ["denied", undefined]]);
    });

    it("never runs a call of a tool the chat did not offer, or whose arguments are not a JSON object", async () => {
        const {runner, ran} = recording({always: ["read", "write"]});
        const round = new ToolCallRound([{id: "a", name: "rm", arguments: "{}"}, {id: "b", name: "read", arguments: "[1]"}, {id: "c", name: "write", arguments: "{"}],
            tools, runner, async () => {});
        await round.run();
        expect(ran).toEqual([]);
        expect(round.calls.map((call) => call.error)).toEqual([
            "the model called \"rm\", which is not one of this chat's tools.", "its arguments are not a JSON object.", "its arguments are not JSON."
        ]);
    });

    it("a stop ends a running call and leaves the waiting ones unrun", async () => {
        const {runner, ran} = recording({always: ["read"], hang: true});
        const round = new ToolCallRound([{id: "a", name: "read", arguments: "{}"}, {id: "b", name: "write", arguments: "{}"}], tools, runner, async () => {});
        const running = round.run();
        await tick();
        expect(states(round.calls)).toEqual(["running", "pending"]);
        round.stop();
        await running;
        expect(ran).toEqual(["read {}"]);
        expect(states(round.calls)).toEqual(["stopped", "stopped"]);
        expect(round.stopped).toBe(true);
    });
});
