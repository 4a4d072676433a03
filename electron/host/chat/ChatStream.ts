/**
 * One streaming reply: forwards the engine's token text to its client batched per frame (never the whole message per
 * token), checkpoints the partial reply to disk every {@link CHECKPOINT_MS} (marked `stopped: "crash"` until it
 * completes, so a kill of the whole app leaves an honest record), then saves the final message with engine timing.
 * A reply with tools runs in rounds: a round that calls tools is saved as a message with its calls (ToolCallRound.ts:
 * each waits for the user's decision, then runs), and the next round, the model reading the results, streams as the
 * next message — until a round calls nothing, or {@link MAX_TOOL_ROUNDS} rounds have called tools.
 */
import {randomUUID} from "node:crypto";
import type {ChatMessage, Events} from "../../contract/ipc.js";
import type {EngineChatRequest, EngineRequests, EngineToolUse} from "../../contract/engineProtocol.js";
import type {ChatReply, ChatTurn, PromptProgress} from "../../contract/chat.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {MAX_TOOL_ROUNDS, type ToolCallRecord, type ToolChoiceSetting, type ToolDecision} from "../../contract/tools.js";
import type {ResolvedTools} from "../tools/McpServers.js";
import {chatTurnOf} from "../tools/toolCallText.js";
import {ToolCallRound, type ToolRunner} from "./ToolCallRound.js";

/** Delta batching interval: about two frames at 60 Hz. */
export const DELTA_BATCH_MS = 25;
/** How often a streaming reply is saved; a kill loses at most this much of the reply. */
export const CHECKPOINT_MS = 500;

export type ChatStreamSink = {
    emit<Name extends "chat.delta" | "chat.prompt" | "chat.done" | "chat.error" | "chat.message">(name: Name, payload: Events[Name]): void;
    checkpoint(message: ChatMessage): Promise<void>;
    chat(arg: EngineRequests["chat"][0]): Promise<EngineRequests["chat"][1]>;
    stop(streamId: string): Promise<void>;
    /**
     * The reply is saved and about to be reported: the conversation is free for the next send. Called once, before
     * `chat.done` or `chat.error`, so a client that sends again as soon as it hears of the end is never told a reply
     * is still being written.
     */
    settled?(): void;
    /** The MCP servers that run the reply's calls (McpServers.ts). */
    tools?: ToolRunner;
};

/** A reply's tools: the functions the model sees (resolved from the conversation's settings) and the tool choice. */
export type ReplyTools = {resolved: ResolvedTools; choice: ToolChoiceSetting};

/** What a reply is asked with: the engine's request, and the reply's tools when the conversation has some on. */
export type StreamRequest = Omit<EngineChatRequest, "streamId" | "conversationId" | "tools" | "replyRounds"> & {tools?: ReplyTools};

export class ChatStream {
    /** The message of the round being written (each round of a reply with tools is a message of its own). */
    private roundId = randomUUID();
    private createdAt = Date.now();
    private text = "";
    private pendingText = "";
    private tokens = 0;
    private lastElapsedMs = 0;
    private flushTimer: NodeJS.Timeout | null = null;
    private checkpointTimer: NodeJS.Timeout | null = null;
    private checkpointing: Promise<void> = Promise.resolve();
    private finished = false;
    private stopRequested = false;
    /** The round whose calls are being decided or run. */
    private round: ToolCallRound | null = null;

    constructor(
        readonly streamId: string,
        readonly conversationId: string,
        readonly clientId: string,
        private readonly sink: ChatStreamSink,
        /** The file name of the model writing the reply, kept with it (an export names it). */
        private readonly model?: string
    ) {}

    /** The id of the message being written now. */
    get messageId(): string {
        return this.roundId;
    }

    /** `message` with the model that wrote it, where known. */
    private withModel(message: ChatMessage): ChatMessage {
        return this.model == null ? message : {...message, model: this.model};
    }

    async run(request: StreamRequest): Promise<void> {
        this.checkpointTimer = setInterval(() => this.checkpoint(), CHECKPOINT_MS);
        const {tools, ...engineRequest} = request;
        const rounds: ChatTurn[] = [];
        try {
            for (let index = 0; ; index++) {
                // the conversation goes with the reply, so the engine keeps its KV cache per conversation (and, with the
                // server on, in the app's own tenant); both ids are this stream's own, never the request's
                const reply = await this.sink.chat({
                    ...engineRequest, ...this.toolUse(tools, index), ...(rounds.length > 0 && {replyRounds: [...rounds]}),
                    streamId: this.streamId, conversationId: this.conversationId
                });
                this.flushDeltas();
                const stopped = reply.aborted || this.stopRequested ? "user" : undefined;
                const message = this.withModel({
                    id: this.roundId, role: "assistant", text: reply.text, createdAt: this.createdAt, timing: reply.timing,
                    stopReason: stopped != null ? "stopped" : reply.stopReason, prompt: reply.prompt, context: reply.context,
                    ...(reply.restore != null ? {restore: reply.restore} : {}),
                    ...(reply.leftOutMessages > 0 ? {leftOutMessages: reply.leftOutMessages} : {}),
                    ...(reply.toolTokens != null ? {toolTokens: reply.toolTokens} : {}),
                    ...(reply.speculative != null ? {speculative: {kind: reply.speculative.kind, drafted: reply.speculative.drafted, accepted: reply.speculative.accepted}} : {}),
                    ...(stopped != null ? {stopped} : {})
                });
                const calls = stopped == null && tools != null ? reply.toolCalls ?? [] : [];
                if (calls.length === 0) {
                    await this.finish(message);
                    this.sink.settled?.();
                    this.sink.emit("chat.done", {streamId: this.streamId, conversationId: this.conversationId, message});
                    return;
                }
                const {saved, ended} = await this.runRound(message, reply, tools!, index);
                if (ended) {
                    const last: ChatMessage = {...saved, stopped: "user", stopReason: "stopped"};
                    await this.finish(last);
                    this.sink.settled?.();
                    this.sink.emit("chat.done", {streamId: this.streamId, conversationId: this.conversationId, message: last});
                    return;
                }
                rounds.push(chatTurnOf(saved));
                this.nextRound();
            }
        } catch (error) {
            this.flushDeltas();
            const crashed = error instanceof TensorwiseError && (error.code === "engine-crashed" || error.code === "engine-stopped");
            const message = this.withModel({
                id: this.roundId, role: "assistant", text: this.text, createdAt: this.createdAt,
                stopped: crashed ? "crash" : "user", ...(crashed ? {} : {stopReason: "stopped" as const})
            });
            // the user's own stop that landed before the first token (the engine answers it with an abort error) is
            // a stopped reply like any other, not an error
            const stoppedByUser = this.stopRequested && !crashed;
            // a reply refused or failed before its first text (the context full under "stop", an engine error or
            // crash during the prompt) leaves no message: the error stands where the reply would be, and an empty
            // reply is never saved into the conversation
            const kept = stoppedByUser || this.text !== "";
            await (kept ? this.finish(message) : this.finishEmpty()).catch(() => {});
            this.sink.settled?.();
            if (stoppedByUser) {
                this.sink.emit("chat.done", {streamId: this.streamId, conversationId: this.conversationId, message});
                return;
            }
            const reason = error instanceof Error ? error.message : String(error);
            this.sink.emit("chat.error", {
                streamId: this.streamId, conversationId: this.conversationId,
                ...(error instanceof TensorwiseError && {code: error.code}),
                error: !crashed ? reason
                    : kept ? `The engine stopped while replying; the reply so far was kept. ${reason}`.trim()
                    : `The engine stopped before the reply began. ${reason}`.trim()
            });
        }
    }

    /**
     * The tools of round `index`: "required" holds for the first round only (or the model could never answer); after
     * {@link MAX_TOOL_ROUNDS} rounds of calls, none (the model answers with what it has).
     */
    private toolUse(tools: ReplyTools | undefined, index: number): {tools?: EngineToolUse} {
        if (tools == null || index >= MAX_TOOL_ROUNDS)
            return {};
        return {tools: {tools: tools.resolved.tools, choice: index > 0 && tools.choice === "required" ? "auto" : tools.choice}};
    }

    /**
     * Saves round `message` with its calls and runs them (each decided by the user, ToolCallRound.ts): the message as
     * last saved, and whether it ends the reply (stopped while its calls were decided or ran, or past the last round).
     */
    private async runRound(message: ChatMessage, reply: ChatReply, tools: ReplyTools, index: number): Promise<{saved: ChatMessage; ended: boolean}> {
        let saved = message;
        const save = async (calls: ToolCallRecord[]) => {
            saved = {...message, toolCalls: calls};
            await this.save(saved);
            this.sink.emit("chat.message", {streamId: this.streamId, conversationId: this.conversationId, message: saved});
        };
        const runner = this.sink.tools;
        if (runner == null)
            throw new TensorwiseError("internal", "a reply with tools has no MCP servers to run them");
        const round = new ToolCallRound(reply.toolCalls ?? [], tools.resolved, runner, save);
        if (index >= MAX_TOOL_ROUNDS) {
            // past the last round the model was given no tools; a call it still wrote is not run
            await save(round.calls.map((call) => ({...call, state: "failed", error: `the reply already made ${MAX_TOOL_ROUNDS} rounds of tool calls.`})));
            return {saved, ended: true};
        }
        this.round = round;
        try {
            await save(round.calls);
            if (this.stopRequested)
                round.stop();
            await round.run();
        } finally {
            this.round = null;
        }
        return {saved, ended: round.stopped};
    }

    /** Starts the next round's message. */
    private nextRound(): void {
        this.roundId = randomUUID();
        this.createdAt = Date.now();
        this.text = "";
        this.pendingText = "";
        this.tokens = 0;
    }

    /** The user's decision on a call of this reply waiting for one. */
    decide(callId: string, decision: ToolDecision): void {
        const round = this.round;
        if (round == null || !round.has(callId))
            throw new TensorwiseError("bad-request", "this reply has no tool call waiting with that id");
        round.decide(callId, decision);
    }

    /** Engine token text for this stream. */
    onDelta(text: string, elapsedMs: number, tokens: number): void {
        if (this.finished)
            return;
        this.text += text;
        this.pendingText += text;
        this.tokens = tokens;
        this.lastElapsedMs = elapsedMs;
        this.flushTimer ??= setTimeout(() => this.flushDeltas(), DELTA_BATCH_MS);
    }

    /** Engine prompt-processing progress for this stream, passed on at once (a few events per second at most). */
    onPromptProgress(progress: PromptProgress): void {
        if (this.finished)
            return;
        this.sink.emit("chat.prompt", {streamId: this.streamId, conversationId: this.conversationId, ...progress});
    }

    /**
     * Asks the engine to stop, and stops a round of calls (those waiting do not run, the running one is cancelled);
     * `run` then saves what came and reports `chat.done` with `stopped: "user"`.
     */
    async stop(): Promise<void> {
        if (this.finished)
            return;
        this.stopRequested = true;
        this.round?.stop();
        await this.sink.stop(this.streamId).catch(() => {});
    }

    private flushDeltas(): void {
        if (this.flushTimer != null) {
            clearTimeout(this.flushTimer);
            this.flushTimer = null;
        }
        if (this.pendingText === "")
            return;
        const text = this.pendingText;
        this.pendingText = "";
        this.sink.emit("chat.delta", {
            streamId: this.streamId, conversationId: this.conversationId, messageId: this.roundId, text,
            elapsedMs: this.lastElapsedMs, tokens: this.tokens
        });
    }

    private checkpoint(): void {
        if (this.finished || this.text === "" || this.round != null)
            return;
        const message = this.withModel({id: this.roundId, role: "assistant", text: this.text, createdAt: this.createdAt, stopped: "crash"});
        this.checkpointing = this.checkpointing.then(() => this.sink.checkpoint(message)).catch(() => {});
    }

    /** Saves `message` after any checkpoint on its way (which must not land over it). */
    private async save(message: ChatMessage): Promise<void> {
        const saving = this.checkpointing.then(() => this.sink.checkpoint(message));
        this.checkpointing = saving.catch(() => {});
        await saving;
    }

    private async finish(message: ChatMessage): Promise<void> {
        await this.finishEmpty();
        await this.sink.checkpoint(message);
    }

    /** Ends the stream without saving a message (checkpoints only ever save text, so none was saved before). */
    private async finishEmpty(): Promise<void> {
        this.finished = true;
        if (this.checkpointTimer != null)
            clearInterval(this.checkpointTimer);
        await this.checkpointing;
    }
}
