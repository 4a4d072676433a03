/**
 * Counts the tokens of long texts on a worker thread, so a long request is measured without stalling the server.
 * node-llama-cpp's tokenizer (`LlamaModel.tokenize`) is synchronous on the calling thread and there is no asynchronous
 * one in node-llama-cpp 3.22.1; tokenizing 3 MB takes seconds, during which every other stream stops. The worker
 * loads only the model's vocabulary (node-llama-cpp's `vocabOnly`: the GGUF's metadata and tokenizer, no weights) in
 * its own node-llama-cpp instance, and counts there while the server's thread goes on.
 *
 * Only texts above {@link SYNC_TOKENIZE_BYTES} go there: below it the synchronous tokenizer is cheaper than the trip.
 */
import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";
import {Worker} from "node:worker_threads";
import type {GenerationRequest} from "../common/GenerationRequest.js";

/** Below this many bytes of text a request is tokenized on the server's thread (tens of ms at worst on a slow core). */
export const SYNC_TOKENIZE_BYTES = 64 * 1024;

/**
 * The worker, as source: evaluated rather than loaded from a file, so the same code runs from `dist/` and from the
 * TypeScript sources under test. It imports node-llama-cpp from the path the server resolved.
 */
const WORKER_SOURCE = `
const {parentPort, workerData} = require("node:worker_threads");
(async () => {
    const {getLlama, LlamaLogLevel} = await import(workerData.nodeLlamaCpp);
    const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error, logger: () => {}});
    const model = await llama.loadModel({modelPath: workerData.modelPath, vocabOnly: true});
    parentPort.on("message", ({id, texts, specialTokens}) => {
        try {
            parentPort.postMessage({id, counts: texts.map((text) => model.tokenize(text, specialTokens).length)});
        } catch (error) {
            parentPort.postMessage({id, error: String(error && error.message || error)});
        }
    });
    parentPort.postMessage({ready: true});
})().catch((error) => parentPort.postMessage({failed: String(error && error.message || error)}));
`;

type Reply = {id: number; counts?: number[]; error?: string} & {ready?: boolean; failed?: string};

export class TokenCounter {
    private worker: Worker | null = null;
    private ready: Promise<void> | null = null;
    private readonly pending = new Map<number, {resolve: (counts: number[]) => void; reject: (error: Error) => void}>();
    private nextId = 0;
    private closed = false;

    constructor(private readonly modelPath: string) {}

    /** Token counts of `texts`, each tokenized alone as `LlamaModel.tokenize(text, specialTokens)` does, on the worker. */
    async count(texts: readonly string[], specialTokens = false): Promise<number[]> {
        await this.start();
        const worker = this.worker!;
        const id = this.nextId++;
        return await new Promise<number[]>((resolve, reject) => {
            this.pending.set(id, {resolve, reject});
            worker.postMessage({id, texts, specialTokens});
        });
    }

    /** Stops the worker; counts still waiting reject. */
    async close(): Promise<void> {
        this.closed = true;
        const worker = this.worker;
        this.worker = null;
        this.failAll(new Error("the server is closing"));
        await worker?.terminate();
    }

    private start(): Promise<void> {
        if (this.closed)
            return Promise.reject(new Error("the server is closing"));
        this.ready ??= new Promise<void>((resolve, reject) => {
            const nodeLlamaCpp = pathToFileURL(createRequire(import.meta.url).resolve("node-llama-cpp")).href;
            const worker = new Worker(WORKER_SOURCE, {eval: true, workerData: {nodeLlamaCpp, modelPath: this.modelPath}});
            this.worker = worker;
            worker.unref();
            worker.on("message", (reply: Reply) => {
                if (reply.ready === true)
                    resolve();
                else if (reply.failed != null)
                    reject(new Error(`the token counter could not load the model's vocabulary: ${reply.failed}`));
                else {
                    const waiting = this.pending.get(reply.id);
                    this.pending.delete(reply.id);
                    if (reply.counts != null)
                        waiting?.resolve(reply.counts);
                    else
                        waiting?.reject(new Error(reply.error ?? "the token counter failed"));
                }
            });
            worker.once("error", (error) => {
                reject(error);
                this.failAll(error);
            });
            worker.once("exit", () => {
                // a worker that died is started again by the next count
                this.ready = null;
                this.worker = null;
                this.failAll(new Error("the token counter stopped"));
            });
        });
        return this.ready;
    }

    private failAll(error: Error): void {
        for (const waiting of this.pending.values())
            waiting.reject(error);
        this.pending.clear();
    }
}

/**
 * The fewest tokens `request` can take, counted on the worker. A completion's prompt is tokenized as the server will
 * (special tokens parsed, plus the BOS the model adds): exact. A chat's messages are counted each alone; the chat template wraps each in role markers and
 * only adds tokens, except where the text before a message merges with its first token — at most one token per side,
 * so two per message are taken off.
 */
export async function countedPromptTokens(counter: TokenCounter, request: GenerationRequest, addsBos: boolean): Promise<number> {
    if (request.kind !== "chat")
        return (await counter.count([request.prompt], true))[0]! + (addsBos ? 1 : 0);
    const counts = await counter.count(request.messages.map((message) => message.text));
    return Math.max(0, counts.reduce((sum, count) => sum + count, 0) - 2 * request.messages.length);
}
