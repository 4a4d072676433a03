/**
 * Messages between PromptWorker.ts and its worker (promptWorkerEntry.ts), a child process or a worker thread. Travel
 * as structured clones (`serialization: "advanced"` for a child).
 */
import type {NativeChatApplyRequest, NativeChatApplyResult} from "../../../engine/native/tensorwiseBindings.js";
import type {GrammarRefusalCode} from "../../constraints/GrammarRefusal.js";

/** What the worker is started with. */
export type PromptWorkerStart = {
    /** node-llama-cpp's entry as a file URL, as the server resolved it (the worker imports it from there). */
    nodeLlamaCpp: string;
    /** The model file, for its vocabulary only (node-llama-cpp's `vocabOnly`). */
    modelPath: string;
};

export type PromptJob =
    /** Token counts of `texts`, each tokenized alone (`LlamaModel.tokenize(text, specialTokens)`). */
    | {kind: "count"; texts: string[]; specialTokens: boolean}
    /** A client's GBNF grammar, checked (checkGbnf.ts) and parsed by llama.cpp. */
    | {kind: "grammar"; gbnf: string; vocabularySize: number | null}
    /** A JSON schema (as JSON text): checked (checkJsonSchema.ts), converted, and its grammar checked as above. */
    | {kind: "schema"; schema: string; vocabularySize: number | null}
    /**
     * llama.cpp's chat layer applied to each request (common_chat_templates_apply), each resulting grammar checked,
     * and each prompt's tokens counted (special tokens parsed) when `count`.
     */
    | {kind: "chat"; requests: NativeChatApplyRequest[]; count: boolean; vocabularySize: number | null;
        /** Where each tool of the requests' `tools` came in (their schemas are checked first, and a refusal names it). */
        toolFields: string[]};

export type PromptJobResult =
    | {kind: "count"; counts: number[]}
    | {kind: "grammar"}
    | {kind: "schema"; gbnf: string}
    | {kind: "chat"; results: NativeChatApplyResult[]; promptTokens: number[] | null};

export type PromptWorkerRequest = {id: number; job: PromptJob};

export type PromptWorkerReply =
    | {id: number; ok: true; result: PromptJobResult}
    /** The structure was refused: GrammarRefusal's code and message, or llama.cpp's own error (`code` "grammar_syntax"). */
    | {id: number; ok: false; refusal: {code: GrammarRefusalCode; message: string; field?: string}}
    /** Anything else that failed (the message). */
    | {id: number; ok: false; error: string};

/** The worker's first message: ready to take jobs, or why it cannot. */
export type PromptWorkerHello = {ready: true} | {failed: string};
