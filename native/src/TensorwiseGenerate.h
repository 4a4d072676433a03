#pragma once
// tensorwise native generation loop (TensorwiseGenerate.cpp): decode + sampling on the context's generation thread
// with a ggml threadpool attached to the context, tokens streamed to JS in batches.
#include "llama.h"
#include "napi.h"

// Joins the context's generation thread and frees the threadpool the native loop attached to `ctx`; call after
// llama_free(ctx) (AddonContext::disposeMemory).
void tensorwiseReleaseContextThreadpool(llama_context* ctx);

// Frees every speculative session that uses `ctx` as its target or its draft (TensorwiseSpeculative.cpp); call before
// llama_free(ctx): llama.cpp's speculators detach their samplers from the draft context when they are freed.
void tensorwiseReleaseSpecSessions(llama_context* ctx);

void tensorwiseRegisterGenerateExports(Napi::Env env, Napi::Object exports);
