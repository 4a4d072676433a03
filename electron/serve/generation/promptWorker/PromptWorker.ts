/**
 * The work a request needs before it may use the server's thread, done elsewhere: counting the tokens of long texts,
 * applying llama.cpp's chat layer with tools (the template renders every tool's schema, and builds a grammar of them),
 * turning a JSON schema into a grammar, and checking every grammar (a client's, a schema's, the tools') against
 * STRUCTURE_LIMITS and with llama.cpp's own parser. node-llama-cpp's tokenizer and llama.cpp's chat layer, schema
 * converter and grammar parser are synchronous on the calling thread, unbounded (a grammar of 100,000 nested groups
 * overflows the parser's stack; 128 tools of 30 KB schemas take 13 s to render), and some inputs crash them.
 *
 * The worker is a child process where this Node can fork itself — a crash or a hang there ends only the worker, which
 * the next job starts again — and a worker thread under Electron (the engine is a utility process, whose binary forks
 * only with the RunAsNode fuse, which the app turns off), as validateGgufOutOfProcess.ts chooses; there the checks
 * before anything native runs are what keep the engine alive. Each job has a time limit, past which the worker is
 * stopped and the job refused. Jobs run one at a time, in arrival order.
 */
import {fork} from "node:child_process";
import {existsSync} from "node:fs";
import {createRequire} from "node:module";
import {fileURLToPath, pathToFileURL} from "node:url";
import {Worker} from "node:worker_threads";
import type {NativeChatApplyRequest, NativeChatApplyResult} from "../../../engine/native/tensorwiseBindings.js";
import type {ValidatorIsolation} from "../../../engine/gguf/validateGgufOutOfProcess.js";
import {transpileForChild} from "../../../engine/gguf/validate/transpileForChild.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {GrammarRefusal} from "../../constraints/GrammarRefusal.js";
import type {PromptJob, PromptJobResult, PromptWorkerHello, PromptWorkerReply, PromptWorkerStart} from "./promptWorkerProtocol.js";

/** A job that takes longer is stopped with its worker. Converting or rendering anything within the limits takes milliseconds. */
export const PROMPT_JOB_TIMEOUT_MS = 10_000;
/** The worker's start (node-llama-cpp and the vocabulary) may take this long on a busy machine. */
const START_TIMEOUT_MS = 60_000;

export type PromptWorkerOptions = {
    /** Defaults to {@link PROMPT_JOB_TIMEOUT_MS}. */
    jobTimeoutMs?: number;
    /** Defaults to a thread under Electron, a child process elsewhere. */
    isolation?: ValidatorIsolation;
};

/** How a job ended other than with its result: stopped by its time limit, or its worker died. */
export class PromptWorkerStopped extends Error {
    constructor(readonly why: "timeout" | "crashed", message: string) {
        super(message);
    }
}

/**
 * A failed preparation as the client is answered: a refused structure, or one whose preparation was stopped or ended its
 * worker, is a 400 naming `field` (or the field the refusal names); anything else is passed on.
 */
export function refusedPreparation(error: unknown, field: string): unknown {
    if (error instanceof GrammarRefusal)
        return error.toBadRequest(field);
    if (error instanceof PromptWorkerStopped)
        return OpenAiError.badRequest(`\`${field}\`: ${error.message}; it is refused.`, field, "grammar_limit");
    return error;
}

type Pending = {job: PromptJob; resolve: (result: PromptJobResult) => void; reject: (error: Error) => void};

/** The side the worker talks to: a child process or a worker thread, the same messages both ways. */
type Channel = {send(message: unknown): void; stop(): void};

export class PromptWorker {
    private channel: Channel | null = null;
    private ready: Promise<void> | null = null;
    private readonly queue: Pending[] = [];
    private running: {pending: Pending; id: number; timer: NodeJS.Timeout | null} | null = null;
    private nextId = 0;
    private closed = false;
    private readonly jobTimeoutMs: number;
    private readonly isolation: ValidatorIsolation;

    constructor(private readonly modelPath: string, options: PromptWorkerOptions = {}) {
        this.jobTimeoutMs = options.jobTimeoutMs ?? PROMPT_JOB_TIMEOUT_MS;
        this.isolation = options.isolation ?? (process.versions.electron === undefined ? "process" : "thread");
    }

    /** Token counts of `texts`, each tokenized alone as `LlamaModel.tokenize(text, specialTokens)` does. */
    async count(texts: readonly string[], specialTokens = false): Promise<number[]> {
        const result = await this.run({kind: "count", texts: [...texts], specialTokens});
        return (result as Extract<PromptJobResult, {kind: "count"}>).counts;
    }

    /** Checks a client's GBNF grammar; throws GrammarRefusal with why it is refused. */
    async checkGrammar(gbnf: string, vocabularySize: number | null): Promise<void> {
        await this.run({kind: "grammar", gbnf, vocabularySize});
    }

    /** The grammar of a JSON schema, checked; throws GrammarRefusal with why the schema is refused. */
    async schemaGrammar(schema: unknown, vocabularySize: number | null): Promise<string> {
        const result = await this.run({kind: "schema", schema: JSON.stringify(schema), vocabularySize});
        return (result as Extract<PromptJobResult, {kind: "schema"}>).gbnf;
    }

    /** llama.cpp's chat layer applied to each request, each grammar checked, and each prompt's tokens when `count`. */
    async chatApply(requests: readonly NativeChatApplyRequest[], options: {vocabularySize: number | null; count: boolean; toolFields: readonly string[]}):
        Promise<{results: NativeChatApplyResult[]; promptTokens: number[] | null}> {
        const result = await this.run({kind: "chat", requests: [...requests], count: options.count, vocabularySize: options.vocabularySize, toolFields: [...options.toolFields]});
        const {results, promptTokens} = result as Extract<PromptJobResult, {kind: "chat"}>;
        return {results, promptTokens};
    }

    /** Stops the worker; jobs still waiting reject. */
    async close(): Promise<void> {
        this.closed = true;
        this.failAll(new Error("the server is closing"));
        this.stopWorker();
    }

    private run(job: PromptJob): Promise<PromptJobResult> {
        if (this.closed)
            return Promise.reject(new Error("the server is closing"));
        return new Promise<PromptJobResult>((resolve, reject) => {
            this.queue.push({job, resolve, reject});
            this.pump();
        });
    }

    private pump(): void {
        if (this.running != null || this.closed)
            return;
        const pending = this.queue.shift();
        if (pending == null)
            return;
        const id = this.nextId++;
        this.running = {pending, id, timer: null};
        this.start().then(() => {
            const running = this.running;
            if (running?.id !== id)
                return;
            // the time limit runs from when the worker has the job, not while it starts
            running.timer = setTimeout(() => {
                // the worker may be stuck in native code: stop it (a thread cannot be stopped there, only left), start another for the next job
                this.stopWorker();
                this.finish(id, () => pending.reject(new PromptWorkerStopped("timeout", `it took longer than ${this.jobTimeoutMs / 1000} s to prepare and was stopped`)));
            }, this.jobTimeoutMs);
            this.channel?.send({id, job: pending.job});
        }, (error: unknown) => this.finish(id, () => pending.reject(error instanceof Error ? error : new Error(String(error)))));
    }

    private finish(id: number, settle: () => void): void {
        if (this.running?.id !== id)
            return;
        if (this.running.timer != null)
            clearTimeout(this.running.timer);
        this.running = null;
        settle();
        this.pump();
    }

    private onReply(reply: PromptWorkerReply): void {
        const running = this.running;
        if (running == null || running.id !== reply.id)
            return;
        this.finish(reply.id, () => {
            if (reply.ok)
                running.pending.resolve(reply.result);
            else if ("refusal" in reply)
                running.pending.reject(new GrammarRefusal(reply.refusal.code, reply.refusal.message, reply.refusal.field));
            else
                running.pending.reject(new Error(reply.error));
        });
    }

    /** The worker died (a crash in llama.cpp, or killed): the job it ran fails, the next one starts another. */
    private onExit(channel: Channel, why: string): void {
        if (this.channel !== channel)
            return;
        this.channel = null;
        this.ready = null;
        const running = this.running;
        if (running != null)
            this.finish(running.id, () => running.pending.reject(new PromptWorkerStopped("crashed", `llama.cpp failed on it and its worker ended (${why})`)));
    }

    private stopWorker(): void {
        const channel = this.channel;
        this.channel = null;
        this.ready = null;
        channel?.stop();
    }

    private start(): Promise<void> {
        this.ready ??= this.launch();
        return this.ready;
    }

    private async launch(): Promise<void> {
        const entry = await resolveEntry();
        const start: PromptWorkerStart = {nodeLlamaCpp: pathToFileURL(createRequire(import.meta.url).resolve("node-llama-cpp")).href, modelPath: this.modelPath};
        await new Promise<void>((resolve, reject) => {
            let settled = false;
            const timer = setTimeout(() => fail(new Error(`the prompt worker did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
            const fail = (error: Error) => {
                if (!settled) {
                    settled = true;
                    clearTimeout(timer);
                    if (this.channel === channel) {
                        this.channel = null;
                        this.ready = null;
                    }
                    channel.stop();
                    reject(error);
                }
            };
            const onMessage = (message: unknown) => {
                const hello = message as PromptWorkerHello & Partial<PromptWorkerReply>;
                if ("ready" in hello && !settled) {
                    settled = true;
                    clearTimeout(timer);
                    resolve();
                } else if ("failed" in hello)
                    fail(new Error(`the prompt worker could not load the model's vocabulary: ${hello.failed}`));
                else
                    this.onReply(message as PromptWorkerReply);
            };
            const onExit = (why: string) => {
                fail(new Error(`the prompt worker ended before it was ready (${why})`));
                this.onExit(channel, why);
            };
            const channel = this.isolation === "process" ? forkChild(entry, onMessage, onExit) : startThread(entry, onMessage, onExit);
            this.channel = channel;
            channel.send(start);
        });
    }

    private failAll(error: Error): void {
        const running = this.running;
        if (running != null)
            this.finish(running.id, () => running.pending.reject(error));
        for (const pending of this.queue.splice(0))
            pending.reject(error);
    }
}

function forkChild(entry: string, onMessage: (message: unknown) => void, onExit: (why: string) => void): Channel {
    const child = fork(entry, [], {serialization: "advanced", stdio: ["ignore", "ignore", "ignore", "ipc"]});
    // the server's exit is not held up by an idle worker
    child.unref();
    (child as unknown as {channel?: {unref(): void}}).channel?.unref();
    child.on("message", onMessage);
    child.on("exit", (code, signal) => onExit(signal ?? `exit code ${code}`));
    child.on("error", (error) => onExit(error.message));
    return {
        send: (message) => {
            if (child.connected)
                child.send(message as never);
        },
        stop: () => {
            if (child.exitCode === null && child.signalCode === null)
                child.kill("SIGKILL");
        }
    };
}

function startThread(entry: string, onMessage: (message: unknown) => void, onExit: (why: string) => void): Channel {
    const worker = new Worker(entry);
    worker.unref();
    worker.on("message", onMessage);
    worker.on("error", (error) => onExit(error.message));
    worker.on("exit", (code) => onExit(`exit code ${code}`));
    return {send: (message) => worker.postMessage(message), stop: () => void worker.terminate()};
}

/**
 * In a packaged app: the one-file bundle (scripts/buildValidatorBundle.mjs) from `app.asar.unpacked`. From `dist/`:
 * the compiled sibling. From TypeScript sources (tests): a transpiled copy, as validateGgufOutOfProcess.ts does.
 */
async function resolveEntry(): Promise<string> {
    const bundle = fileURLToPath(new URL("./promptWorkerEntry.bundle.mjs", import.meta.url));
    const unpackedBundle = bundle.replace(/\.asar([/\\])/, ".asar.unpacked$1");
    if (unpackedBundle !== bundle && existsSync(unpackedBundle))
        return unpackedBundle;
    const compiled = fileURLToPath(new URL("./promptWorkerEntry.js", import.meta.url));
    if (import.meta.url.endsWith(".js") && existsSync(compiled))
        return compiled;
    return transpileForChild(fileURLToPath(new URL("./promptWorkerEntry.ts", import.meta.url)));
}
