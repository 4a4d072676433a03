#pragma once
// tensorwise: how a node-llama-cpp grammar (AddonGrammar) becomes a llama.cpp sampler, as llama-server's
// common_sampler_init builds it for a chat template's tool-call grammar (common/sampling.cpp): lazy until a trigger
// word, token or pattern appears (llama_sampler_init_grammar_lazy_patterns), and advanced past the generation prompt
// the template already put in the prompt (the grammar's root starts with it).
#include <string>
#include <vector>

#include "llama.h"

struct TensorwiseGrammarTrigger {
    // common_grammar_trigger_type (common/common.h): 0 token, 1 word, 2 pattern, 3 full pattern
    int type = 1;
    std::string value;
};

struct TensorwiseGrammarSampling {
    bool lazy = false;
    std::vector<TensorwiseGrammarTrigger> triggers;
    // texts that are single tokens of the model and must stay so (a trigger word that is one of them triggers on the token)
    std::vector<std::string> preservedTokens;
    // text the grammar accepts first (common_chat_params::generation_prompt); ignored by a lazy grammar, as in llama.cpp
    std::string prefill;
};

// The grammar sampler of an AddonGrammarEvaluationState; `sampling` is default (plain llama_sampler_init_grammar) for
// every grammar but a tool-call grammar. Returns nullptr when llama.cpp rejects the grammar or a trigger pattern, or
// the grammar rejects the prefill as this vocabulary tokenizes it.
llama_sampler* tensorwiseInitGrammarSampler(const llama_vocab* vocab, const std::string& grammar, const std::string& root,
    const TensorwiseGrammarSampling& sampling);
