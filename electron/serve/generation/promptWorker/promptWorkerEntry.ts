/**
 * The prompt worker's entry (PromptWorker.ts): a child process (Node IPC) or a worker thread. It loads llama.cpp
 * through node-llama-cpp with the model's vocabulary only, then answers jobs one at a time: token counts, and every
 * structure a client sends for the model to follow — a grammar, a JSON schema, tools through the chat template —
 * checked against STRUCTURE_LIMITS (checkGbnf.ts, checkJsonSchema.ts) before llama.cpp converts or parses it here,
 * where a crash or a hang ends this worker instead of the server.
 */
import {parentPort} from "node:worker_threads";
import type {Llama, LlamaGrammar as LlamaGrammarClass, LlamaModel} from "node-llama-cpp";
import {STRUCTURE_LIMITS} from "../../../contract/limits.js";
import type {NativeChatApplyRequest, TensorwiseBindings} from "../../../engine/native/tensorwiseBindings.js";
import {checkGbnf} from "../../constraints/checkGbnf.js";
import {checkJsonSchema} from "../../constraints/checkJsonSchema.js";
import {GrammarRefusal} from "../../constraints/GrammarRefusal.js";
import {parseGbnf} from "../../constraints/parseGbnf.js";
import type {PromptJob, PromptJobResult, PromptWorkerHello, PromptWorkerReply, PromptWorkerRequest, PromptWorkerStart} from "./promptWorkerProtocol.js";

type Loaded = {llama: Llama; model: LlamaModel; bindings: TensorwiseBindings; LlamaGrammar: typeof LlamaGrammarClass};

async function load(start: PromptWorkerStart): Promise<Loaded> {
    const {getLlama, LlamaLogLevel, LlamaGrammar} = await import(start.nodeLlamaCpp) as typeof import("node-llama-cpp");
    const llama = await getLlama({gpu: false, build: "never", skipDownload: true, progressLogs: false, logLevel: LlamaLogLevel.error, logger: () => {}});
    const model = await llama.loadModel({modelPath: start.modelPath, vocabOnly: true});
    const bindings = (llama as unknown as {_bindings: TensorwiseBindings})._bindings;
    return {llama, model, bindings, LlamaGrammar};
}

/** A grammar within the limits for its source, with no dead end, that llama.cpp's parser takes. */
function checkGrammar(loaded: Loaded, gbnf: string, maxChars: number, vocabularySize: number | null): void {
    checkGbnf(parseGbnf(gbnf, maxChars), {vocabularySize: vocabularySize ?? undefined});
    try {
        new loaded.LlamaGrammar(loaded.llama, {grammar: gbnf});
    } catch (error) {
        throw new GrammarRefusal("grammar_syntax", `llama.cpp could not parse it (${firstLine(error)})`);
    }
}

/** llama.cpp's json_schema_to_grammar of a schema (JSON text) already checked. */
function convertSchema(loaded: Loaded, schema: string): string {
    try {
        return loaded.bindings.tensorwiseJsonSchemaToGrammar(schema);
    } catch (error) {
        throw new GrammarRefusal("grammar_syntax", `llama.cpp cannot turn this JSON schema into a grammar: ${lastLine(error)}`);
    }
}

function run(loaded: Loaded, job: PromptJob): PromptJobResult {
    switch (job.kind) {
        case "count":
            return {kind: "count", counts: job.texts.map((text) => loaded.model.tokenize(text, job.specialTokens).length)};
        case "grammar":
            checkGrammar(loaded, job.gbnf, STRUCTURE_LIMITS.grammarChars, job.vocabularySize);
            return {kind: "grammar"};
        case "schema": {
            checkJsonSchema(JSON.parse(job.schema) as unknown);
            const gbnf = convertSchema(loaded, job.schema);
            checkGrammar(loaded, gbnf, STRUCTURE_LIMITS.derivedGrammarChars, job.vocabularySize);
            return {kind: "schema", gbnf};
        }
        case "chat": {
            // each tool's schema checked and converted alone first: the chat layer builds one grammar of them all, and a
            // schema's grammar can grow with the square of its optional properties (json_schema_to_grammar's object rule)
            const tools = JSON.parse(job.requests[0]?.tools ?? "[]") as {function?: {parameters?: unknown}}[];
            let grammarChars = 0;
            tools.forEach((tool, index) => {
                const field = job.toolFields[index] ?? "tools";
                try {
                    const schema = JSON.stringify(tool.function?.parameters ?? {});
                    checkJsonSchema(JSON.parse(schema) as unknown);
                    grammarChars += convertSchema(loaded, schema).length;
                } catch (error) {
                    throw error instanceof GrammarRefusal ? new GrammarRefusal(error.code, error.message, field) : error;
                }
                if (grammarChars > STRUCTURE_LIMITS.derivedGrammarChars)
                    throw new GrammarRefusal("grammar_limit", `the grammars of the first ${index + 1} tools' schemas already take more than ` +
                        `${STRUCTURE_LIMITS.derivedGrammarChars} characters together (llama.cpp's chat layer builds one grammar of all of them)`, "tools");
            });
            const results = job.requests.map((request: NativeChatApplyRequest) => {
                let applied;
                try {
                    applied = loaded.bindings.tensorwiseChatApply(request);
                } catch (error) {
                    throw new GrammarRefusal("grammar_syntax", `llama.cpp could not apply this model's chat template to it: ${firstLine(error)}`);
                }
                if (applied.grammar !== "")
                    checkGrammar(loaded, applied.grammar, STRUCTURE_LIMITS.derivedGrammarChars, job.vocabularySize);
                return applied;
            });
            return {kind: "chat", results, promptTokens: job.count ? results.map((result) => loaded.model.tokenize(result.prompt, true).length) : null};
        }
    }
}

function answer(loaded: Loaded, request: PromptWorkerRequest): PromptWorkerReply {
    try {
        return {id: request.id, ok: true, result: run(loaded, request.job)};
    } catch (error) {
        if (error instanceof GrammarRefusal)
            return {id: request.id, ok: false, refusal: {code: error.code, message: error.message, ...(error.field != null && {field: error.field})}};
        return {id: request.id, ok: false, error: firstLine(error)};
    }
}

function firstLine(error: unknown): string {
    return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300);
}

/** llama.cpp's schema converter says what failed on the lines after its first ("JSON schema conversion failed:"). */
function lastLine(error: unknown): string {
    const lines = (error instanceof Error ? error.message : String(error)).split("\n").filter((line) => line.trim() !== "");
    return lines.slice(1).join("; ").slice(0, 300) || firstLine(error);
}

function serve(send: (message: PromptWorkerReply | PromptWorkerHello) => void, onMessage: (listener: (message: unknown) => void) => void): void {
    let loaded: Promise<Loaded> | null = null;
    onMessage((message) => {
        if (loaded == null) {
            loaded = load(message as PromptWorkerStart);
            loaded.then(() => send({ready: true}), (error: unknown) => send({failed: firstLine(error)}));
            return;
        }
        void loaded.then((ready) => send(answer(ready, message as PromptWorkerRequest)));
    });
}

const port = parentPort;
if (port != null)
    serve((message) => port.postMessage(message), (listener) => port.on("message", listener));
else if (process.send != null) {
    const send = process.send.bind(process);
    serve((message) => send(message), (listener) => process.on("message", listener));
    // the server went away: nothing is left to answer
    process.on("disconnect", () => process.exit(0));
}
