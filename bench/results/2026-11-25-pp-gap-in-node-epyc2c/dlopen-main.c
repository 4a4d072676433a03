// Arms D and Dn of interleave.sh: a plain C process that dlopen()s libllama-bench-in-process.so, whose constructor
// runs stock llama-bench (llama-bench-in-process.cpp). Usage: LLAMA_BENCH_ARGS="…" ./dlopen-main <path to the .so>
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char ** argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s <shared object>\n", argv[0]); return 2; }
    void * handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    return 0;
}
