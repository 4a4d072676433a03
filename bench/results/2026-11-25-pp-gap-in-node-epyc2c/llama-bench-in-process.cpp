// Stock llama-bench (tools/llama-bench/llama-bench.cpp, compiled unchanged beside this file) run inside whatever
// process loads this shared object: a Node.js process through process.dlopen, or a plain C program through dlopen
// (dlopen-main.c). Arguments come from LLAMA_BENCH_ARGS (split on spaces). It runs in the object's constructor, on the
// loading thread: a thread started from here would deadlock, because the constructor holds the dynamic loader's lock
// and ggml_backend_load_all() dlopen()s the CPU variants. (A std::thread made no difference to stock llama-bench:
// ../2026-11-25-parity-large-thread-per-request-epyc2c/pp-gap-investigation.md.) Node then reports "Module did not
// self-register", which the caller ignores: llama-bench has already printed its results.
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

int llama_bench(int argc, char ** argv);

__attribute__((constructor)) static void run_llama_bench_in_process() {
    const char * args = std::getenv("LLAMA_BENCH_ARGS");
    if (args == nullptr) return;
    std::vector<std::string> words{"llama-bench"};
    std::istringstream in(args);
    for (std::string word; in >> word;) words.push_back(word);
    std::vector<char *> argv;
    for (auto & word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    const int rc = llama_bench(static_cast<int>(words.size()), argv.data());
    if (rc != 0) std::_Exit(rc);
}
