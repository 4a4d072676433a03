import type {Llama} from "node-llama-cpp";

/** Version of the native extension this engine expects (TENSORWISE_EXT_VERSION in native/src/TensorwiseExt.h). */
export const TENSORWISE_EXT_VERSION = 6;

/** A ggml device as the loaded llama.cpp binary sees it. */
export type NativeDevice = {
    name: string;
    description: string;
    type: "cpu" | "gpu" | "igpu" | "accel" | "unknown";
    backend: string | null;
    freeBytes: number;
    totalBytes: number;
    /** The device's own buffer type, e.g. `"CUDA0"`, `"Vulkan0"`, `"CPU"`. */
    bufferType: string | null;
    /** The device's pinned host buffer type, e.g. `"CUDA_Host"`, or `null`. */
    hostBufferType: string | null;
};

/** A buffer type tensors can be placed in. */
export type NativeBufferType = {
    name: string;
    /**
     * `ggml_backend_buft_is_host`: plain or pinned system RAM. False for the CPU's repacking buffer types (AMX,
     * CPU_REPACK), which are system RAM too: read it through `inSystemRam` (electron/contract/memory.ts).
     */
    isHost: boolean;
    device: string | null;
    deviceType: NativeDevice["type"] | null;
};

/** llama.cpp's memory accounting for one buffer type (source: llama_memory_breakdown_data in src/llama-ext.h). */
export type NativeBufferTypeMemory = NativeBufferType & {
    /** Model weights, bytes. */
    model: number;
    /** Context memory (KV cache), bytes. */
    context: number;
    /** Compute buffers (scratch), bytes. */
    compute: number;
};

/** Request of `tensorwiseProfileOperators` (native/src/TensorwiseProfiler.cpp). */
export type NativeProfileRequest = {
    ops: {type: string; rows: number; cols: number}[];
    /** Expert weights timed as GGML_OP_MUL_MAT_ID (one expert's matrix, `used` of `count` per token). Defaults to none. */
    expertOps?: {type: string; rows: number; cols: number; count: number; used: number}[];
    /** Token counts timed on GPU devices. */
    batchSizes?: number[];
    /** Token counts timed on the CPU. */
    cpuBatchSizes?: number[];
    /** Device names; omitted = every CPU and GPU device. */
    devices?: string[];
    threads?: number;
    warmup?: number;
    repeats?: number;
    maxMsPerPoint?: number;
    /** Skip a batch size whose time extrapolated from the op's previous batch exceeds this (ms). */
    maxEstimatedMsPerPoint?: number;
    /** Limit of the matmul phase (ms); links are timed before it, outside it. */
    timeLimitMs?: number;
    transferBytes?: number;
    switchBytes?: number;
    cpuScanBytes?: number;
    /** Batch-1 matmuls are timed over this many bytes of distinct weights (0 = a handful of copies). */
    decodeWorkingSetBytes?: number;
    /** CPU weights laid out as a load with no GPU device would (repacked where llama.cpp repacks). Defaults to `false`. */
    cpuOnlyLoad?: boolean;
    /** One layer's attention, timed at each (tokens, keys) point with and without flash attention, per KV cache type. */
    attention?: {headDim: number; headDimV: number; heads: number; kvHeads: number; points: {tokens: number; keys: number}[]; kvTypes: string[]};
};

/** Result of `tensorwiseProfileOperators`. */
export type NativeProfileResult = {
    devices: {name: string; type: "cpu" | "gpu"}[];
    /** `weightBufferType`: where the timed weights lived, as llama.cpp would load them (an extra CPU buffer type such as AMX where it repacks). */
    matmuls: {device: string; type: string; rows: number; cols: number; batch: number; supported: boolean; medianUs: number; minUs: number; samples: number;
        weightBufferType: string}[];
    transfers: {device: string; pinnedH2dBytesPerSec: number; pageableH2dBytesPerSec: number; d2hBytesPerSec: number; switchUs: number; copySmallUs: number; launchUs: number}[];
    /** MUL_MAT_ID timings (missing in builds before them). */
    expertMatmuls?: {device: string; type: string; rows: number; cols: number; count: number; used: number; batch: number; distinct: number;
        supported: boolean; medianUs: number; minUs: number; samples: number; weightBufferType: string}[];
    /** One layer's attention timings (missing in builds before them). */
    attentions?: {device: string; flash: boolean; kvType: string; tokens: number; keys: number; supported: boolean; medianUs: number; minUs: number;
        samples: number}[];
    /** Copies of the experts a micro-batch uses from pinned host memory to a GPU (missing in builds before them). */
    expertCopies?: {device: string; type: string; rows: number; cols: number; count: number; used: number; batch: number; distinct: number;
        bytes: number; medianUs: number}[];
    cpuReadBytesPerSec: number;
    /** One (almost) empty graph on the CPU backend, µs (-1 when not measured); missing in older builds. */
    cpuLaunchUs?: number;
    elapsedMs: number;
    truncated: boolean;
    cancelled: boolean;
};

/** Request of `tensorwiseFitParams` (llama.cpp's common_fit_params, native/src/TensorwiseFit.cpp). */
export type NativeFitRequest = {
    modelPath: string;
    /** Device name → bytes llama.cpp must leave free on it. */
    margins?: Record<string, number>;
    defaultMargin?: number;
    contextSize?: number;
    batchSize?: number;
    minContext?: number;
    useMmap?: boolean;
};

/** Result of `tensorwiseFitParams`: llama.cpp's chosen `-ngl` and overflow overrides. */
export type NativeFitResult = {
    status: "success" | "failure" | "error";
    gpuLayers: number;
    contextSize: number;
    overrides: [pattern: string, bufferType: string][];
    margins: Record<string, number>;
};

/** Request of `tensorwiseSimulateMemory` (native/src/TensorwiseSimulate.cpp): a whole configuration, simulated with no_alloc. */
export type NativeSimulateRequest = {
    modelPath: string;
    /** llama.cpp `-ngl` (every layer: the layer count + 1). */
    gpuLayers: number;
    overrides?: [pattern: string, bufferType: string][];
    /** llama.cpp `--device`: GPU device names; `[]` = none. Omitted: llama.cpp's choice (every GPU). */
    devices?: string[];
    contextSize: number;
    batchSize: number;
    sequences?: number;
    flashAttention: boolean;
    /** ggml type ids of the K and V caches. */
    typeK: number;
    typeV: number;
    kvOffload: boolean;
    opOffload: boolean;
    /**
     * A SWA layer's cache as large as the context (llama.cpp's `--swa-full`). Defaults to `false`, as node-llama-cpp
     * creates contexts (`swaFullCache` off): the cache holds the window plus a micro-batch.
     */
    swaFull?: boolean;
};

/** Request of `tensorwiseGenerate` (native/src/TensorwiseGenerate.cpp). */
export type NativeGenerateRequest = {
    sequenceId: number;
    /** Tokens already in the KV cache at positions 0‥startPosition−1 are kept; everything after is removed first. */
    startPosition: number;
    /** Tokens to decode from `startPosition` on (may be empty when startPosition > 0 and its logits are fresh). */
    prompt: Uint32Array;
    maxTokens: number;
    stopAtEog: boolean;
    /** 0 = greedy (argmax). */
    temperature: number;
    seed: number;
    topK: number;
    topP: number;
    /** 0 = off. Defaults to 0. */
    minP?: number;
    /** llama.cpp's repeat penalty on the last {@link repeatPenaltyLastTokens} generated tokens; 1 = off. Defaults to 1. */
    repeatPenalty?: number;
    /**
     * > 0: decode the prompt in chunks that start at 32 tokens and grow towards the
     * micro-batch while one takes under this many ms (an abort waits for the chunk in flight: GPU backends do not check
     * llama.cpp's abort callback inside a graph). 0 or absent: full micro-batches (benchmarks, as llama-bench does).
     */
    promptChunkTargetMs?: number;
    /** Defaults to 64 (node-llama-cpp's). */
    repeatPenaltyLastTokens?: number;
    /**
     * Speculative decoding (native/src/TensorwiseSpeculative.h): llama.cpp's speculator by name (`type`), the most and
     * fewest tokens a draft holds, and for `draft-simple` / `draft-mtp` the draft's addon context (the draft model's,
     * or the target model's MTP context), made with as many sequences as this one. Absent: none.
     */
    speculative?: {type: string; nMax: number; nMin?: number; ngramSizeN?: number; ngramSizeM?: number; draftContext?: object};
};

/** How a native generation ended. */
export type NativeGenerateEnd = {
    reason: "maxTokens" | "eog" | "abort" | "error";
    /** Tokens of the sequence now in the KV cache, from position 0 (prompt + generated tokens that were decoded). */
    decodedTokens: number;
    error: string | null;
    /** What speculative decoding did, when the request asked for it. */
    speculative?: {type: string; steps: number; fullyAccepted: number; drafted: number; accepted: number; note: string | null};
};

/** Request of `tensorwiseChatApply` (native/src/TensorwiseChat.cpp: common_chat_templates_apply). */
export type NativeChatApplyRequest = {
    /** The model's chat template (GGUF `tokenizer.chat_template`), or `"chatml"`. */
    template: string;
    bosToken: string;
    eosToken: string;
    /** The prompt will get the model's BOS token prepended: a BOS the template writes first is left out. */
    addBos: boolean;
    /** JSON text of OpenAI-shaped messages (`tool_calls` on assistant messages, `role: "tool"` results with `tool_call_id`). */
    messages: string;
    /** JSON text of OpenAI-shaped tools (`[{type: "function", function: {name, description, parameters}}]`). */
    tools: string;
    toolChoice: "auto" | "none" | "required";
    parallelToolCalls: boolean;
    addGenerationPrompt: boolean;
    /**
     * llama.cpp's reasoning format by name (common_reasoning_format_from_name: "none", "auto", "deepseek",
     * "deepseek-legacy"): other than "none", the parser puts the thinking in `reasoningContent`. Defaults to "none".
     */
    reasoningFormat?: string;
    /** The template's thinking switch (common_chat_templates_inputs::enable_thinking). Defaults to `true`. */
    enableThinking?: boolean;
    /** JSON text of an object of extra template variables (llama-server's chat_template_kwargs). Defaults to `{}`. */
    chatTemplateKwargs?: string;
};

/** A grammar trigger (common_grammar_trigger): `type` 0 token, 1 word, 2 pattern, 3 full pattern. */
export type NativeGrammarTrigger = {type: number; value: string};

/** Result of `tensorwiseChatApply` (common_chat_params). */
export type NativeChatApplyResult = {
    prompt: string;
    /** common_chat_format id, for `tensorwiseChatParse`. */
    format: number;
    formatName: string;
    /** GBNF of the reply (empty: unconstrained). */
    grammar: string;
    grammarLazy: boolean;
    grammarTriggers: NativeGrammarTrigger[];
    preservedTokens: string[];
    additionalStops: string[];
    /** The assistant turn's opening the prompt ends with; the parser and a non-lazy grammar start with it. */
    generationPrompt: string;
    /** The reply's parser, serialized (common_peg_arena::save). */
    parser: string;
    /** llama.cpp finds a thinking block in the template (common_chat_params::supports_thinking). */
    supportsThinking: boolean;
    /** The tag a thinking block opens with (`<think>`), "" when none. */
    thinkingStartTag: string;
    thinkingEndTags: string[];
};

/** Request of `tensorwiseChatParse` (common_chat_parse). */
export type NativeChatParseRequest = {
    text: string; format: number; parser: string; generationPrompt: string; isPartial: boolean;
    /** As the apply's (the parser was built for it). Defaults to "none". */
    reasoningFormat?: string;
    /** The thinking stays inline in the content (llama-server sets it for "deepseek-legacy" when streaming). Defaults to `false`. */
    reasoningInContent?: boolean;
};

/** Result of `tensorwiseChatParse` (common_chat_msg). */
export type NativeChatParseResult = {
    content: string;
    reasoningContent: string;
    toolCalls: {name: string; arguments: string; id: string}[];
};

/** How a grammar's sampler is built (native/src/TensorwiseGrammarSampling.h). */
export type NativeGrammarSampling = {lazy: boolean; triggers: NativeGrammarTrigger[]; preservedTokens: string[]; prefill: string};

/** The functions the tensorwise patch adds to node-llama-cpp's addon. */
export type TensorwiseBindings = {
    tensorwiseExtVersion(): number;
    tensorwiseGetDevices(): NativeDevice[];
    tensorwiseGetBufferTypes(): NativeBufferType[];
    tensorwiseValidateTensorBufferOverrides(list: [pattern: string, bufferType: string][]): number;
    tensorwiseGetModelMemoryBreakdown(addonModel: object): NativeBufferTypeMemory[];
    tensorwiseGetContextMemoryBreakdown(addonContext: object): NativeBufferTypeMemory[];
    /** Times weight matmuls and transfers in a worker thread. Missing in binaries built before the profiler. */
    tensorwiseProfileOperators?(request: NativeProfileRequest): Promise<NativeProfileResult>;
    /** Makes every running profile stop at its next measurement. */
    tensorwiseCancelProfiles?(): void;
    /** llama.cpp's memory accounting of a whole configuration (weights, KV cache, compute buffers per buffer type), not allocated. */
    tensorwiseSimulateMemory(request: NativeSimulateRequest): Promise<NativeBufferTypeMemory[]>;
    /** llama.cpp's own fitting (`--fit`) in a worker thread. */
    tensorwiseFitParams?(request: NativeFitRequest): Promise<NativeFitResult>;
    /** Whether llama.cpp's RPC backend is loaded, loading it from `libraryPath` when not (native/src/TensorwiseRpc.cpp). */
    tensorwiseRpcAvailable?(libraryPath?: string): boolean;
    /** Registers an rpc-server's devices (`"host:port"`); returns their device names. Aborts the process if it cannot connect. */
    tensorwiseAddRpcServer?(endpoint: string, libraryPath?: string): string[];
    /**
     * Prompt decode + generation on a dedicated native thread with a ggml threadpool attached; `onTokens` receives the
     * tokens in batches with their ms since the call, and `end` once, last.
     */
    tensorwiseGenerate(addonContext: object, request: NativeGenerateRequest,
        onTokens: (tokens: Uint32Array, msSinceStart: Float64Array, end: NativeGenerateEnd | null, promptDecoded: number) => void): {abort(): void};
    /**
     * GBNF for a JSON schema given as JSON text, by llama.cpp's own converter (native/src/TensorwiseGrammar.cpp);
     * throws with llama.cpp's message when the schema cannot be converted.
     */
    tensorwiseJsonSchemaToGrammar(schemaJson: string): string;
    /** llama.cpp's chat template application with tools; throws with llama.cpp's message. */
    tensorwiseChatApply(request: NativeChatApplyRequest): NativeChatApplyResult;
    /** llama.cpp's parse of a reply into content and tool calls; throws with llama.cpp's message when it does not parse. */
    tensorwiseChatParse(request: NativeChatParseRequest): NativeChatParseResult;
    /** Sets how the sampler of `addonGrammar` (a LlamaGrammar's native object) is built: lazy triggers, generation-prompt prefill. */
    tensorwiseSetGrammarSampling(addonGrammar: object, sampling: NativeGrammarSampling): void;
};

/** Thrown when the loaded llama.cpp binary is not the tensorwise-patched build. */
export class UnpatchedBinaryError extends Error {
    readonly code = "unpatched-binary";
    constructor(message: string) {
        super(message);
        this.name = "UnpatchedBinaryError";
    }
}

/**
 * The tensorwise extension functions of a `Llama` instance. Throws {@link UnpatchedBinaryError} if node-llama-cpp
 * loaded a binary without them (e.g. it fell back to a prebuilt binary), since that binary would silently ignore a
 * placement plan.
 */
export function getTensorwiseBindings(llama: Llama): TensorwiseBindings {
    const bindings = (llama as unknown as {_bindings: Partial<TensorwiseBindings>})._bindings;
    if (typeof bindings.tensorwiseExtVersion !== "function")
        throw new UnpatchedBinaryError(
            `node-llama-cpp loaded a ${llama.buildType} binary (${llama.gpu === false ? "cpu" : llama.gpu}) without the tensorwise ` +
            "extension, so per-tensor placement would be ignored. Run `npm run native` to build it."
        );
    const version = bindings.tensorwiseExtVersion();
    if (version !== TENSORWISE_EXT_VERSION)
        throw new UnpatchedBinaryError(
            `the tensorwise native extension is version ${version}, this engine needs ${TENSORWISE_EXT_VERSION}. Run \`npm run native\`.`
        );
    return bindings as TensorwiseBindings;
}
