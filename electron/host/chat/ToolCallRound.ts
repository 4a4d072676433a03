/**
 * One round of tool calls in a reply: the calls the model made (parsed by llama.cpp's chat layer in the engine),
 * checked, each waiting for the user's Approve / Always for this tool / Deny unless its tool is always allowed, then
 * run one after another on their MCP servers. Every change of a call is handed to `changed` (saved and shown at once).
 * A stop ends the round where it is: a call waiting is stopped without running, a call running is cancelled.
 */
import type {ParsedToolCall} from "../../contract/chat.js";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {ToolCallRecord, ToolDecision, ToolRef} from "../../contract/tools.js";
import type {CallOutcome} from "../tools/McpConnection.js";
import type {ResolvedTools} from "../tools/McpServers.js";

/** What a round needs of the MCP servers (McpServers.ts). */
export type ToolRunner = {
    alwaysAllowed(ref: ToolRef): boolean;
    allowAlways(ref: ToolRef): Promise<void>;
    call(ref: ToolRef, args: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome>;
};

/** The arguments of a call as an object, or why they cannot be sent. */
function argumentsOf(text: string): Record<string, unknown> | string {
    if (text.length > TEXT_LIMITS.toolArguments)
        return `its arguments are longer than ${TEXT_LIMITS.toolArguments} characters.`;
    try {
        const value: unknown = JSON.parse(text === "" ? "{}" : text);
        if (value != null && typeof value === "object" && !Array.isArray(value))
            return value as Record<string, unknown>;
        return "its arguments are not a JSON object.";
    } catch {
        return "its arguments are not JSON.";
    }
}

export class ToolCallRound {
    readonly calls: ToolCallRecord[];
    private readonly refs: (ToolRef | null)[];
    private readonly args: (Record<string, unknown> | null)[];
    /**
     * Calls waiting for the user, by id: how to hand each its answer, and the answer. Every call of the round can be
     * answered as soon as it is shown, in any order; they still run in the order the model made them.
     */
    private readonly waiting = new Map<string, {answer: (decision: ToolDecision | "stop") => void; decided: Promise<ToolDecision | "stop">}>();
    private readonly controller = new AbortController();

    constructor(parsed: readonly ParsedToolCall[], tools: ResolvedTools, private readonly runner: ToolRunner,
        private readonly changed: (calls: ToolCallRecord[]) => Promise<void>) {
        this.refs = parsed.map((call) => tools.refs.get(call.name) ?? null);
        this.args = parsed.map((call) => {
            const args = argumentsOf(call.arguments);
            return typeof args === "string" ? null : args;
        });
        this.calls = parsed.map((call, index): ToolCallRecord => {
            const ref = this.refs[index];
            const args = argumentsOf(call.arguments);
            const base = {id: call.id, server: ref?.server ?? "", tool: ref?.tool ?? call.name.slice(0, 128), arguments: call.arguments.slice(0, TEXT_LIMITS.toolArguments)};
            if (ref == null)
                return {...base, state: "failed", error: `the model called "${call.name.slice(0, 64)}", which is not one of this chat's tools.`};
            if (typeof args === "string")
                return {...base, state: "failed", error: args};
            return {...base, state: "pending"};
        });
    }

    /** Whether the round was stopped. */
    get stopped(): boolean {
        return this.controller.signal.aborted;
    }

    /** Decides and runs every call, in order; resolves when each has ended (or the round was stopped). */
    async run(): Promise<void> {
        for (const [index, call] of this.calls.entries())
            if (call.state === "pending" && !this.runner.alwaysAllowed(this.refs[index]!)) {
                let answer!: (decision: ToolDecision | "stop") => void;
                const decided = new Promise<ToolDecision | "stop">((resolve) => { answer = resolve; });
                this.waiting.set(call.id, {answer, decided});
            }
        for (const [index, call] of this.calls.entries()) {
            if (call.state !== "pending")
                continue;
            if (this.stopped) {
                this.set(index, {state: "stopped"});
                continue;
            }
            const ref = this.refs[index]!;
            let approval: "user" | "always" = "always";
            const waiting = this.waiting.get(call.id);
            // a later call of a tool the user allowed always while answering an earlier one runs without asking, unless
            // the user answered it too
            if (waiting != null && (this.decisions.has(call.id) || !this.runner.alwaysAllowed(ref))) {
                const decision = await waiting.decided;
                this.waiting.delete(call.id);
                if (decision === "stop") {
                    await this.update(index, {state: "stopped"});
                    continue;
                }
                if (decision === "deny") {
                    await this.update(index, {state: "denied"});
                    continue;
                }
                if (decision === "always")
                    await this.runner.allowAlways(ref);
                approval = "user";
            }
            await this.update(index, {state: "running", approval});
            const outcome = await this.runner.call(ref, this.args[index]!, this.controller.signal);
            await this.update(index, "stopped" in outcome ? {state: "stopped", ms: outcome.ms}
                : "error" in outcome ? {state: "failed", error: outcome.error, ms: outcome.ms}
                    : {state: "done", result: outcome.result, ms: outcome.ms});
        }
        if (this.stopped)
            await this.changed([...this.calls]);
    }

    /** The user's answer to call `callId`; refused when that call is not waiting for one. */
    decide(callId: string, decision: ToolDecision): void {
        const waiting = this.waiting.get(callId);
        if (waiting == null || this.decisions.has(callId))
            throw new TensorwiseError("bad-request", "this tool call is not waiting for a decision (it was decided, or the reply ended)");
        this.decisions.add(callId);
        waiting.answer(decision);
    }

    /** Calls answered already (an answer is given once). */
    private readonly decisions = new Set<string>();

    /** Whether call `callId` is one of this round's. */
    has(callId: string): boolean {
        return this.calls.some((call) => call.id === callId);
    }

    /** Stops the round: calls waiting are stopped unrun, the running one is cancelled. */
    stop(): void {
        this.controller.abort();
        for (const waiting of this.waiting.values())
            waiting.answer("stop");
    }

    private set(index: number, change: Partial<ToolCallRecord>): void {
        this.calls[index] = {...this.calls[index]!, ...change};
    }

    private async update(index: number, change: Partial<ToolCallRecord>): Promise<void> {
        this.set(index, change);
        await this.changed([...this.calls]);
    }
}
