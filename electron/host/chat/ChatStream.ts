/**
 * One streaming reply: forwards the engine's token text to its client batched per frame (never the whole message per
 * token), checkpoints the partial reply to disk every {@link CHECKPOINT_MS} (marked `stopped: "crash"` until it
 * completes, so a kill of the whole app leaves an honest record), then saves the final message with engine timing.
 */
import {randomUUID} from "node:crypto";
import type {ChatMessage, Events} from "../../contract/ipc.js";
import type {EngineChatRequest, EngineRequests} from "../../contract/engineProtocol.js";
import type {PromptProgress} from "../../contract/chat.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

/** Delta batching interval: about two frames at 60 Hz. */
export const DELTA_BATCH_MS = 25;
/** How often a streaming reply is saved; a kill loses at most this much of the reply. */
export const CHECKPOINT_MS = 500;

export type ChatStreamSink = {
    emit<Name extends "chat.delta" | "chat.prompt" | "chat.done" | "chat.error">(name: Name, payload: Events[Name]): void;
    checkpoint(message: ChatMessage): Promise<void>;
    chat(arg: EngineRequests["chat"][0]): Promise<EngineRequests["chat"][1]>;
    stop(streamId: string): Promise<void>;
    /**
     * The reply is saved and about to be reported: the conversation is free for the next send. Called once, before
     * `chat.done` or `chat.error`, so a client that sends again as soon as it hears of the end is never told a reply
     * is still being written.
     */
    settled?(): void;
};

export class ChatStream {
    readonly messageId = randomUUID();
    private readonly createdAt = Date.now();
    private text = "";
    private pendingText = "";
    private tokens = 0;
    private lastElapsedMs = 0;
    private flushTimer: NodeJS.Timeout | null = null;
    private checkpointTimer: NodeJS.Timeout | null = null;
    private checkpointing: Promise<void> = Promise.resolve();
    private finished = false;
    private stopRequested = false;

    constructor(
        readonly streamId: string,
        readonly conversationId: string,
        readonly clientId: string,
        private readonly sink: ChatStreamSink,
        /** The file name of the model writing the reply, kept with it (an export names it). */
        private readonly model?: string
    ) {}

    /** `message` with the model that wrote it, where known. */
    private withModel(message: ChatMessage): ChatMessage {
        return this.model == null ? message : {...message, model: this.model};
    }

    async run(request: Omit<EngineChatRequest, "streamId" | "conversationId">): Promise<void> {
        this.checkpointTimer = setInterval(() => this.checkpoint(), CHECKPOINT_MS);
        try {
            // the conversation goes with the reply, so the engine keeps its KV cache per conversation (and, with the
            // server on, in the app's own tenant); both ids are this stream's own, never the request's
            const reply = await this.sink.chat({...request, streamId: this.streamId, conversationId: this.conversationId});
            this.flushDeltas();
            const stopped = reply.aborted || this.stopRequested ? "user" : undefined;
            const message = this.withModel({
                id: this.messageId, role: "assistant", text: reply.text, createdAt: this.createdAt, timing: reply.timing,
                stopReason: stopped != null ? "stopped" : reply.stopReason, prompt: reply.prompt, context: reply.context,
                ...(reply.restore != null ? {restore: reply.restore} : {}),
                ...(reply.leftOutMessages > 0 ? {leftOutMessages: reply.leftOutMessages} : {}),
                ...(reply.speculative != null ? {speculative: {kind: reply.speculative.kind, drafted: reply.speculative.drafted, accepted: reply.speculative.accepted}} : {}),
                ...(stopped != null ? {stopped} : {})
            });
            await this.finish(message);
            this.sink.settled?.();
            this.sink.emit("chat.done", {streamId: this.streamId, conversationId: this.conversationId, message});
        } catch (error) {
            this.flushDeltas();
            const crashed = error instanceof TensorwiseError && (error.code === "engine-crashed" || error.code === "engine-stopped");
            const message = this.withModel({
                id: this.messageId, role: "assistant", text: this.text, createdAt: this.createdAt,
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

    /** Asks the engine to stop; `run` then saves what came and reports `chat.done` with `stopped: "user"`. */
    async stop(): Promise<void> {
        if (this.finished)
            return;
        this.stopRequested = true;
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
            streamId: this.streamId, conversationId: this.conversationId, messageId: this.messageId, text,
            elapsedMs: this.lastElapsedMs, tokens: this.tokens
        });
    }

    private checkpoint(): void {
        if (this.finished || this.text === "")
            return;
        const message = this.withModel({id: this.messageId, role: "assistant", text: this.text, createdAt: this.createdAt, stopped: "crash"});
        this.checkpointing = this.checkpointing.then(() => this.sink.checkpoint(message)).catch(() => {});
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
