#pragma once
// tensorwise: llama.cpp's chat layer (common/chat.h, in libllama-common) for the OpenAI-compatible server's tool calls:
// a chat template applied with tools (prompt, tool-call grammar and its triggers, the parser of the reply) and the
// reply parsed into content and tool calls, exactly as llama-server does it.
#include "napi.h"

void tensorwiseRegisterChatExports(Napi::Env env, Napi::Object exports);
