#!/bin/bash
# Builds the probes of this folder next to a cached stock llama-bench (the folder `tensorwise bench --llama-bench`
# made, under build/native/llama-bench/; default: the newest): libllama-bench-in-process.so (stock llama-bench.cpp whose llama_bench() runs
# when a process loads the object) and the plain C loaders. Usage: bash build.sh [llama-bench folder]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${1:-$(dirname "$(ls -t "$root"/build/native/llama-bench/cpu-*/llama-bench | head -1)")}
S=$root/build/native/llama.cpp
g++ -O2 -DNDEBUG -std=c++17 -pthread -fPIC -shared -I"$S/include" -I"$S/ggml/include" -I"$S/common" -I"$S/vendor" \
    -I"$S/tools/llama-bench" "$S/tools/llama-bench/llama-bench.cpp" "$here/llama-bench-in-process.cpp" \
    "$B"/libllama.*so "$B/libllama-common.so" "$B"/libggml.*so "$B/libggml-base.so" -Wl,-rpath,"$B" \
    -o "$B/libllama-bench-in-process.so"
gcc -O2 "$here/dlopen-main.c" -o "$B/dlopen-main" -ldl
gcc -O2 -no-pie "$here/dlopen-main.c" -o "$B/dlopen-main-nopie" -ldl
echo "$B"
