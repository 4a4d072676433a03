/**
 * Which of llama.cpp's server tests (build/native/llama.cpp/tools/server/tests/unit) run against `tensorwise serve`
 * (../llamaServerTests.cpu.test.ts), and why each one left out is left out. Tests marked `slow` by llama.cpp are not
 * run either (`-m "not slow"`, as its tests.sh does by default): they load real models from Hugging Face.
 *
 * A test is left out only for one of these reasons: it reads the text or token counts of llama.cpp's test model (the
 * stand-in here is a generated random-weight model, whose text means nothing); it needs an endpoint, request field
 * or server flag that only llama-server has; or tensorwise answers differently on purpose, each said with where.
 */

/** The test files run. */
export const LLAMA_TEST_FILES: readonly string[] = [
    "test_basic.py", "test_security.py", "test_chat_completion.py", "test_embedding.py", "test_compat_anthropic.py",
    "test_compat_oai_responses.py", "test_tool_call.py"
];

const LLAMA_ONLY = "llama-server's own";
const MODEL_TEXT = "reads the text or token counts of llama.cpp's stories260K model (its tokenizer and trained weights); " +
    "the stand-in is a generated random-weight model";
const ROUTER = "starts llama-server's router (no model loaded; llama-server serves several models)";

/** The test files not run at all. */
export const LLAMA_FILES_NOT_RUN: readonly {file: string; reason: string}[] = [
    {file: "test_completion.py", reason: `${LLAMA_ONLY} POST /completion (its format: content, tokens, n_probs, slots), besides two tests through the Python openai client, which is not in Debian 12`},
    {file: "test_compat_gcp.py", reason: `${LLAMA_ONLY} Vertex AI /predict endpoint`},
    {file: "test_ctx_shift.py", reason: `context shift through ${LLAMA_ONLY} /completion; tensorwise fits a long chat by its context policy`},
    {file: "test_ignore_eos.py", reason: `${LLAMA_ONLY} /completion with ignore_eos`},
    {file: "test_infill.py", reason: `${LLAMA_ONLY} /infill (fill-in-the-middle)`},
    {file: "test_kv_keep_only_active.py", reason: `${LLAMA_ONLY} /completion, --cache-ram and --kv-unified`},
    {file: "test_lora.py", reason: "LoRA adapters"},
    {file: "test_mcp_servers.py", reason: "MCP servers of llama-server's web UI"},
    {file: "test_metrics.py", reason: `${LLAMA_ONLY} /metrics and /slots`},
    {file: "test_proxy.py", reason: `${LLAMA_ONLY} /cors-proxy of its web UI`},
    {file: "test_rerank.py", reason: "/rerank (a reranking model)"},
    {file: "test_router.py", reason: ROUTER},
    {file: "test_sleep.py", reason: `${LLAMA_ONLY} --sleep-idle-seconds, /props and /metrics`},
    {file: "test_slot_save.py", reason: `${LLAMA_ONLY} /slots save and restore (tensorwise keeps conversations' KV state by itself: ConversationKvStore.ts)`},
    {file: "test_speculative.py", reason: "speculative decoding (a draft model)"},
    {file: "test_stream.py", reason: ROUTER},
    {file: "test_template.py", reason: `${LLAMA_ONLY} /apply-template`},
    {file: "test_tokenize.py", reason: `${LLAMA_ONLY} /tokenize and /detokenize`},
    {file: "test_tools_builtin.py", reason: "llama-server's built-in tools (--tools)"},
    {file: "test_vision_api.py", reason: "images (tinygemma3 from Hugging Face)"}
];

/** Tests (all parameter sets, or one: `name[params]`) of {@link LLAMA_TEST_FILES} that are deselected, and why. */
export const LLAMA_EXCLUDED_TESTS: readonly {test: string; reason: string}[] = [
    {test: "unit/test_basic.py::test_server_multiple_addresses", reason: "tensorwise serve binds one --host address (the shim refuses `--host 127.0.0.1,::1`)"},
    {test: "unit/test_basic.py::test_server_props", reason: `${LLAMA_ONLY} /props`},
    {test: "unit/test_basic.py::test_server_slots", reason: `${LLAMA_ONLY} /slots`},
    {test: "unit/test_basic.py::test_load_split_model", reason: `a split GGUF from Hugging Face; ${MODEL_TEXT}`},
    {test: "unit/test_basic.py::test_no_ui", reason: "llama-server's web UI at /: tensorwise serve has none (the app is its UI)"},
    {test: "unit/test_basic.py::test_server_model_aliases_and_tags", reason: "several aliases and --tags: tensorwise serve lists one model id (--alias)"},

    {test: "unit/test_security.py::test_access_static_assets_without_api_key", reason: "llama-server's web UI files"},
    {test: "unit/test_security.py::test_incorrect_api_key", reason: "on purpose: a missing or wrong key is answered as OpenAI's API answers it, 401 with type " +
        "invalid_request_error and code invalid_api_key (apiKeys.ts; llama-server says authentication_error, which tensorwise says on /v1/messages)"},
    {test: "unit/test_security.py::test_correct_api_key", reason: `${LLAMA_ONLY} POST /completions (its format, not OpenAI's /v1/completions)`},
    {test: "unit/test_security.py::test_correct_api_key_anthropic_header", reason: `${LLAMA_ONLY} POST /completions (its format, not OpenAI's /v1/completions)`},
    {test: "unit/test_security.py::test_cors_options", reason: "on purpose: llama-server allows every web origin by default (it reflects Origin, with " +
        "credentials); tensorwise serve allows only the origins given with --cors-origin (CorsPolicy.ts), so a page elsewhere cannot use the server"},
    {test: "unit/test_security.py::test_cors_origins_localhost_reflects", reason: `${ROUTER}, with llama-server's \`localhost\` origin wildcard`},
    {test: "unit/test_security.py::test_cors_origins_localhost_rejects", reason: `${ROUTER}, with llama-server's \`localhost\` origin wildcard`},
    {test: "unit/test_security.py::test_cors_origins_defaults_to_localhost_with_tools_enabled", reason: `${ROUTER}, with its built-in tools`},
    {test: "unit/test_security.py::test_cors_proxy_only_forwards_explicit_proxy_headers", reason: `${LLAMA_ONLY} /cors-proxy`},
    {test: "unit/test_security.py::test_local_media_file", reason: "images (tinygemma3, --media-path)"},

    {test: "unit/test_chat_completion.py::test_chat_completion", reason: `${MODEL_TEXT} (and system_fingerprint as llama.cpp's build number)`},
    {test: "unit/test_chat_completion.py::test_chat_completion_cached_tokens", reason: MODEL_TEXT},
    {test: "unit/test_chat_completion.py::test_chat_completion_stream", reason: `${MODEL_TEXT} (and a first chunk with content null: tensorwise sends "" as OpenAI's API does)`},
    {test: "unit/test_chat_completion.py::test_chat_template", reason: "--chat-template with a built-in name and the `__verbose` prompt echo (--verbose)"},
    {test: "unit/test_chat_completion.py::test_chat_template_assistant_prefill", reason: "the `__verbose` prompt echo (--verbose)"},
    {test: "unit/test_chat_completion.py::test_chat_template_continue_final_message_vllm_compat", reason: "the `__verbose` prompt echo (--verbose) and the add_generation_prompt / continue_final_message fields"},
    {test: "unit/test_chat_completion.py::test_chat_template_continue_final_message_mutual_exclusion", reason: "--chat-template with a built-in name (llama3)"},
    {test: "unit/test_chat_completion.py::test_apply_chat_template", reason: `${LLAMA_ONLY} /apply-template`},
    {test: "unit/test_chat_completion.py::test_completion_with_response_format[response_format0-6-\"42\"]", reason: "response_format.schema beside type json_object is a llama.cpp extension " +
        "(OpenAI's json_object has no schema): refused by name; json_schema is the way (responsesStructured.cpu.test.ts)"},
    {test: "unit/test_chat_completion.py::test_completion_with_response_format[response_format1-10-[ -3000 ]]", reason: "response_format.schema beside type json_object is a llama.cpp extension: refused by name"},
    {test: "unit/test_chat_completion.py::test_completion_with_response_format[response_format2-10-\"foooooo\"]", reason: "on purpose: json_schema without `name`, which OpenAI's API requires, " +
        "is refused (parseGenerationRequest.ts)"},
    ...[5, 6, 7].map((index) => ({test: `unit/test_chat_completion.py::test_completion_with_response_format[response_format${index}-0-None]`,
        reason: "an invalid response_format.schema beside json_object: it would pass only because that llama.cpp field is refused as a whole, not for the schema it holds"})),
    {test: "unit/test_chat_completion.py::test_completion_with_json_schema", reason: "the top-level json_schema field is llama.cpp's own (response_format.json_schema is OpenAI's), and --verbose"},
    {test: "unit/test_chat_completion.py::test_chat_completion_with_timings_per_token", reason: `${LLAMA_ONLY} timings_per_token field (refused by name)`},
    {test: "unit/test_chat_completion.py::test_logit_bias", reason: `${LLAMA_ONLY} /tokenize (logit_bias itself: sampling.cpu.test.ts)`},
    {test: "unit/test_chat_completion.py::test_context_size_exceeded", reason: "on purpose: an over-long prompt is a 400 in OpenAI's shape (type invalid_request_error, " +
        "code context_length_exceeded, promptBound.ts), not llama-server's exceed_context_size_error with n_prompt_tokens and n_ctx"},
    {test: "unit/test_chat_completion.py::test_context_size_exceeded_stream", reason: "on purpose: an over-long prompt is a 400 in OpenAI's shape (code context_length_exceeded), " +
        "not llama-server's exceed_context_size_error"},
    {test: "unit/test_chat_completion.py::test_return_progress", reason: `${LLAMA_ONLY} return_progress field (refused by name)`},
    {test: "unit/test_chat_completion.py::test_chat_completions_multiple_choices", reason: "n: 2 (tensorwise answers one choice per request and refuses n > 1 by name) and llama-server's id_slot field"},
    {test: "unit/test_chat_completion.py::test_chat_completions_token_count", reason: `${LLAMA_ONLY} /chat/completions/input_tokens`},
    {test: "unit/test_chat_completion.py::test_verbose_debug", reason: `${LLAMA_ONLY} verbose field (refused by name)`},

    {test: "unit/test_embedding.py::test_embedding_mixed_input[-False]", reason: "on purpose: an empty input is refused, as OpenAI's API refuses it (an empty text has no embedding)"},
    {test: "unit/test_embedding.py::test_embedding_mixed_input[input3-False]", reason: "token ids and text mixed in one input: a llama.cpp extension; OpenAI's input is text, token ids, or a list of either"},
    {test: "unit/test_embedding.py::test_embedding_mixed_input[input7-True]", reason: "token ids and text mixed in one input: a llama.cpp extension"},
    {test: "unit/test_embedding.py::test_embedding_pooling_mean", reason: "--pooling mean: tensorwise pools as the GGUF says (the stand-in: its last token)"},
    {test: "unit/test_embedding.py::test_embedding_pooling_mean_multiple", reason: "--pooling mean: tensorwise pools as the GGUF says (the stand-in: its last token)"},
    {test: "unit/test_embedding.py::test_embedding_pooling_none", reason: `--pooling none and ${LLAMA_ONLY} /embeddings (a vector per token)`},
    {test: "unit/test_embedding.py::test_embedding_pooling_none_oai", reason: "--pooling none: tensorwise pools as the GGUF says"},
    {test: "unit/test_embedding.py::test_embedding_error_prompt_too_long", reason: "reads llama-server's wording (\"too large\"); tensorwise's 400 names the input's tokens and the limit"},
    {test: "unit/test_embedding.py::test_embedding_usage_single", reason: MODEL_TEXT},
    {test: "unit/test_embedding.py::test_embedding_usage_multiple", reason: MODEL_TEXT},

    {test: "unit/test_compat_anthropic.py::test_anthropic_tool_result_with_text", reason: "on purpose: Anthropic's API takes tool_result blocks first in a user message, " +
        "and tensorwise refuses text before them (parseAnthropicRequest.ts)"},
    ...["test_anthropic_tool_use_basic", "test_anthropic_tool_streaming", "test_anthropic_streaming_content_block_indices"].map((name) => ({
        test: `unit/test_compat_anthropic.py::${name}`,
        reason: "on purpose: tools on a chat template without tool-call syntax (stories260K's, and the stand-in's) are refused by name with a 400 " +
            "(generation/chatLayer/templateCallsTools.ts); llama-server answers them with free text, as if the tools had been honoured"
    })),
    {test: "unit/test_compat_anthropic.py::test_anthropic_tool_result_with_image", reason: "images: llama-server answers 500 on a text-only model, tensorwise refuses image blocks by name with a 400"},
    {test: "unit/test_compat_anthropic.py::test_anthropic_vision_format_accepted", reason: "images: llama-server answers 500 on a text-only model, tensorwise refuses image blocks by name with a 400"},
    {test: "unit/test_compat_anthropic.py::test_anthropic_vision_base64_with_multimodal_model", reason: "images (tinygemma3 from Hugging Face)"},
    {test: "unit/test_compat_anthropic.py::test_anthropic_empty_messages", reason: "on purpose: Anthropic's API requires at least one message, and so does tensorwise (llama-server accepts [])"},
    {test: "unit/test_compat_anthropic.py::test_anthropic_thinking", reason: "extended thinking: reasoning is not split out of replies, and `thinking` is refused by name"},
    {test: "unit/test_compat_anthropic.py::test_anthropic_thinking_history_in_count_tokens", reason: "thinking blocks in the history: reasoning is not served, and they are refused by name"},
    {test: "unit/test_compat_anthropic.py::test_anthropic_thinking_history_in_template", reason: `${LLAMA_ONLY} /apply-template`},

    {test: "unit/test_compat_oai_responses.py::test_responses_stream_with_llama_telemetry", reason: `${LLAMA_ONLY} timings_per_token and return_progress fields (refused by name)`},

    ...["tools0-None", "tools1-None", "tools2-none"].map((params) => ({
        test: `unit/test_tool_call.py::test_completion_without_tool_call_fast[meta-llama-Llama-3.3-70B-Instruct-128-${params}-CompletionMode.STREAMED]`,
        reason: "on purpose: the first chunk carries `\"content\": \"\"` beside the role, as OpenAI's API sends it (llama-server sends null), " +
            "and utils.py's make_any_request refuses an empty content delta; the same request not streamed is run"
    }))
];

/** Skip reasons a selected test may give (anything else is a failure of the run). */
export const LLAMA_TESTS_ALLOWED_SKIPS: readonly string[] = [
    // scripts/check/llamaServerTests/openai_missing/openai/__init__.py, only where the Python openai package is missing
    "Skipped: the Python openai package is not in Debian 12; the same calls are covered by the npm openai client tests in electron/serve/"
];
