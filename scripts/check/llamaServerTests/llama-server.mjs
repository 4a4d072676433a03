#!/usr/bin/env node
// llama-server's command line, run as `tensorwise serve`: what llama.cpp's own server tests
// (build/native/llama.cpp/tools/server/tests/utils.py, ServerProcess.start) start through LLAMA_SERVER_BIN_PATH.
//
// Every flag utils.py can pass is in FLAGS below, with what becomes of it: translated to a `tensorwise serve` flag,
// accepted because tensorwise already behaves that way (the reason is printed at every start), or refused. A flag not
// in the table is refused by name too: the server then does not start, and the test that asked for it fails loudly
// instead of running against something else. Models come from our own GGUF writer (no network): the Hugging Face
// repositories the tests name are mapped to generated stand-ins in STAND_INS, and `--chat-template-file` is written
// into the stand-in's GGUF as `tokenizer.chat_template`, where tensorwise reads a model's template.
//
// Runs in this process (no second Node start): `tensorwise serve` stops on SIGTERM, which utils.py sends.
import {createHash} from "node:crypto";
import {existsSync, mkdirSync, readFileSync, renameSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const dist = (file) => pathToFileURL(path.join(root, "dist", "electron", file)).href;

/** Stand-ins for the Hugging Face models the tests name (`--hf-repo`, `--hf-file`): generated, random weights. */
const STAND_INS = {
    // ServerPreset.tinyllama2: stories260K, a llama without a chat template (llama-server then uses ChatML)
    "ggml-org/test-model-stories260K": {},
    // ServerPreset.bert_bge_small(_with_fa): an embedding model; tensorwise embeds with any served model, and a llama
    // GGUF without a pooling type pools the last token (electron/serve/protocols/embeddings/ServedEmbeddings.ts)
    "ggml-org/models/bert-bge-small/ggml-model-f16.gguf": {}
};

/** The generated models' context length (`llama.context_length`): test_tool_call.py asks 8192 tokens of one slot. */
const STAND_IN_CONTEXT = 8192;

class Refused extends Error {}
const refuse = (flag, why) => {
    throw new Refused(`${flag}: ${why}`);
};

/**
 * llama-server flag → `{value: whether it takes one, apply(value, state)}`. `apply` adds `tensorwise serve` flags to
 * `state.serve`, records what the model needs in `state`, or calls `state.same(flag, why)` for a flag that changes
 * nothing here (printed), or {@link refuse}s.
 */
const FLAGS = {
    "--port": {value: true, apply: (v, s) => s.serve.push("--port", v)},
    "--host": {value: true, apply: (v, s) => v.includes(",")
        ? refuse("--host", `tensorwise serve binds one address (got "${v}")`)
        : s.serve.push("--host", v)},
    // the seed makes a request without its own draw the same reply every time, as llama-server's: without it a
    // random-weight model's first sampled token was its end token in 8 of 60 tries, and a test reading output_tokens > 0 failed
    "--temp": {value: true, apply: (v, s) => s.same("--temp", "tensorwise serve has no server-wide default temperature: a request's own " +
        "`temperature` is honoured, and with the seed passed on a request without one is still drawn the same way every time")},
    "--seed": {value: true, apply: (v, s) => s.serve.push("--seed", v)},
    "--offline": {value: false, apply: (v, s) => s.same("--offline", "tensorwise never downloads; the model is generated here")},
    "--model": {value: true, apply: (v, s) => {
        s.modelFile = v;
    }},
    "--hf-repo": {value: true, apply: (v, s) => {
        s.hfRepo = v;
    }},
    "--hf-file": {value: true, apply: (v, s) => {
        s.hfFile = v;
    }},
    "--batch-size": {value: true, apply: (v, s) => {
        s.batch = v;
        s.serve.push("--batch", v);
    }},
    "--ubatch-size": {value: true, apply: (v, s) => {
        s.ubatch = v;
    }},
    "--threads": {value: true, apply: (v, s) => s.serve.push("--threads", v)},
    "--embedding": {value: false, apply: (v, s) => s.same("--embedding", "tensorwise serves POST /v1/embeddings beside generation, " +
        "without a flag (llama-server's --embedding also turns generation off, which no selected test relies on)")},
    "--pooling": {value: true, apply: (v, s) => v === "last"
        ? s.same("--pooling", "a GGUF without a pooling type, as the generated stand-ins are, is pooled by its last token (ServedEmbeddings.ts)")
        : refuse("--pooling", `tensorwise pools as the GGUF says (the stand-ins: the last token); no --pooling ${v}`)},
    "--no-slots": {value: false, apply: (v, s) => s.same("--no-slots", "tensorwise serve has no /slots endpoint")},
    "--alias": {value: true, apply: (v, s) => v.includes(",")
        ? refuse("--alias", `tensorwise serve lists one model id (got "${v}")`)
        : s.serve.push("--alias", v)},
    "--ctx-size": {value: true, apply: (v, s) => {
        s.ctxSize = Number(v);
    }},
    "--parallel": {value: true, apply: (v, s) => {
        s.parallel = Number(v);
    }},
    "-ctk": {value: true, apply: (v, s) => {
        s.ctk = v;
    }},
    "-ctv": {value: true, apply: (v, s) => {
        s.ctv = v;
    }},
    "-fa": {value: true, apply: (v, s) => s.serve.push("--flash-attention", v)},
    "--n-predict": {value: true, apply: (v, s) => s.same("--n-predict", "tensorwise serve has no server-wide default max_tokens (a request " +
        "without one may use the rest of its context); the selected tests that leave it out check no token count")},
    "--api-key": {value: true, apply: (v, s) => {
        // through the environment, as a user should (an argument shows in `ps`: serveFlags.ts warns)
        s.apiKey = v;
    }},
    "--no-ui": {value: false, apply: (v, s) => s.same("--no-ui", "tensorwise serve has no web page at /")},
    "--jinja": {value: false, apply: (v, s) => s.same("--jinja", "tensorwise always formats chats with the model's own (Jinja) template")},
    "--no-jinja": {value: false, apply: (v, s) => s.same("--no-jinja", "utils.py passes it unless a test asks for --jinja; tensorwise has " +
        "no second, non-Jinja formatter, so a test that relies on llama-server's (tools refused without --jinja) is excluded")},
    "--chat-template-file": {value: true, apply: (v, s) => {
        s.chatTemplateFile = v;
    }}
};

/** Flags utils.py can pass that have no counterpart, with why (anything else is refused as unknown). */
const NOT_IN_TENSORWISE = {
    "--model-url": "models are generated here (no network)",
    "--model-draft": "no speculative decoding",
    "--models-dir": "tensorwise serve serves one model (no router)",
    "--models-max": "tensorwise serve serves one model (no router)",
    "--models-preset": "tensorwise serve serves one model (no router)",
    "--no-models-autoload": "tensorwise serve serves one model (no router)",
    "--cors-origins": "tensorwise serve takes exact origins (--cors-origin), not llama-server's `localhost` wildcard",
    "--n-gpu-layers": "these tests run on the CPU build",
    "--cont-batching": "not a tensorwise serve option",
    "--reranking": "no /rerank endpoint",
    "--metrics": "no /metrics endpoint",
    "--kv-unified": "each sequence has its own context size",
    "--swa-full": "not a tensorwise serve option",
    "--slots": "no /slots endpoint",
    "--tags": "not a tensorwise serve option",
    "--slot-save-path": "no /slots endpoint",
    "--grp-attn-n": "no group attention (self-extend)",
    "--grp-attn-w": "no group attention (self-extend)",
    "--verbose": "no `__verbose` answers",
    "--lora": "no LoRA adapters",
    "--context-shift": "no context shift: an over-long conversation is fitted by the context policy",
    "--spec-type": "no speculative decoding",
    "--spec-draft-n-max": "no speculative decoding",
    "--spec-draft-n-min": "no speculative decoding",
    "--spec-synth-len": "no speculative decoding",
    "--spec-synth-rates": "no speculative decoding",
    "--reasoning-format": "reasoning is not split out of the reply",
    "--reasoning": "reasoning is not split out of the reply",
    "--chat-template": "tensorwise uses the GGUF's template: give --chat-template-file, which the stand-in model is written with",
    "--mmproj-url": "no images",
    "--no-mmproj": "no images",
    "--media-path": "no images",
    "--sleep-idle-seconds": "no sleeping",
    "--cache-ram": "KV state is kept on disk (--kv-disk-budget), not in a RAM cache",
    "--no-cache-idle-slots": "not a tensorwise serve option",
    "--ui-mcp-proxy": "no web UI or MCP",
    "--tools": "no server-side tools",
    "--tools-runtime": "no server-side tools",
    "--mcp-servers-config": "no MCP",
    "--mcp-servers-json": "no MCP",
    "--backend_sampling": "not a tensorwise serve option"
};

function translate(args) {
    const notes = [];
    const state = {serve: ["--gpu", "cpu"], same: (flag, why) => notes.push(`${flag}: ${why}`)};
    for (let i = 0; i < args.length; i++) {
        const flag = args[i];
        const spec = FLAGS[flag];
        if (spec == null)
            refuse(flag, NOT_IN_TENSORWISE[flag] ?? "not a llama-server flag this shim knows");
        let value;
        if (spec.value) {
            value = args[++i];
            if (value == null) refuse(flag, "needs a value");
        }
        spec.apply(value, state);
    }
    if (state.ubatch != null && state.ubatch !== (state.batch ?? "512"))
        refuse("--ubatch-size", `tensorwise's --batch is both llama.cpp's batch and micro-batch (got ${state.ubatch} and --batch-size ${state.batch ?? "unset"})`);
    if (state.ctk != null || state.ctv != null) {
        if (state.ctk !== state.ctv) refuse("-ctk", "tensorwise's --kv-cache-type sets K and V alike");
        state.serve.push("--kv-cache-type", state.ctk);
    }
    if (state.ctxSize != null) {
        // llama-server splits --ctx-size between its --parallel slots; tensorwise's --context is per sequence
        if (state.parallel == null) refuse("--ctx-size", "give --parallel too (llama-server splits the context between slots)");
        state.serve.push("--context", String(Math.floor(state.ctxSize / state.parallel)));
    }
    if (state.parallel != null) state.serve.push("--parallel", String(state.parallel));
    return {state, notes};
}

async function modelPath(state) {
    if (state.modelFile != null) {
        if (state.hfRepo != null || state.chatTemplateFile != null)
            refuse("--model", "give either --model or --hf-repo, and no --chat-template-file with --model (the template is written into a generated model)");
        return state.modelFile;
    }
    if (state.hfRepo == null) refuse("--hf-repo", "no model given (llama-server's router mode is not served)");
    const name = state.hfFile == null ? state.hfRepo : `${state.hfRepo}/${state.hfFile}`;
    if (STAND_INS[name] == null) refuse("--hf-repo", `no generated stand-in for ${name} (models cannot be downloaded here)`);
    const template = state.chatTemplateFile == null ? undefined : readFileSync(path.resolve(state.chatTemplateFile), "utf8");
    const dir = process.env.TENSORWISE_SHIM_MODELS ?? path.join(os.tmpdir(), "tensorwise-llama-shim-models");
    mkdirSync(dir, {recursive: true});
    const key = createHash("sha256").update(JSON.stringify([name, template ?? null, STAND_IN_CONTEXT])).digest("hex").slice(0, 16);
    const file = path.join(dir, `stand-in-${key}.gguf`);
    if (!existsSync(file)) {
        const {makeSyntheticModel} = await import(dist("engine/writer/makeSyntheticModel.js"));
        const partial = `${file}.${process.pid}.partial`;
        // a real template's tool-call grammar starts with the generation prompt as written: no "▁" after special tokens
        await makeSyntheticModel(partial, {preset: "tiny", type: "q8_0", contextLength: STAND_IN_CONTEXT,
            ...(template != null ? {chatTemplate: template, addSpacePrefix: false} : {})});
        renameSync(partial, file);
    }
    return file;
}

try {
    const {state, notes} = translate(process.argv.slice(2));
    const model = await modelPath(state);
    for (const note of notes)
        console.error(`llama-server shim: accepted ${note}`);
    if (state.apiKey != null) process.env.TENSORWISE_API_KEY = state.apiKey;
    const argv = ["serve", model, ...state.serve];
    console.error(`llama-server shim: tensorwise ${argv.join(" ")}`);
    const {main} = await import(dist("cli/main.js"));
    process.exitCode = await main(argv);
} catch (error) {
    if (!(error instanceof Refused)) throw error;
    console.error(`llama-server shim: refused ${error.message}`);
    process.exitCode = 64;
}
