#!/bin/bash
# Interleaved tg32 timings (ms per generated token) of the small parity model, CPU, 1 thread, 5 samples per arm and
# round. Arms as in ../2026-11-25-pp-gap-in-node-epyc2c/interleave.sh (build its probes first with its build.sh):
#   A  stock llama-bench, its own process    B  the same llama-bench code inside a Node.js process (process.dlopen)
#   C  ours (ours-tg.mjs)                    D  the same llama-bench code inside a plain C program
# Usage: MODEL=/tmp/tensorwise-parity-small.gguf ARMS="A B C D" ROUNDS=8 bash interleave-tg.sh > out.txt
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${1:-$(dirname "$(ls -t "$root"/build/native/llama-bench/cpu-*/libllama-bench-in-process.so | head -1)")}
MODEL=${MODEL:-/tmp/tensorwise-parity-small.gguf}
ARGS="-m $MODEL -ngl 0 -ub 512 -t 1 -fa 0 -p 0 -n 32 -r 5 -o jsonl"
ms() { python3 -c "import sys,json; [print(json.dumps([round(x/1e6/32, 3) for x in json.loads(l)['samples_ns']])) for l in sys.stdin if l.startswith('{')]"; }
JS='try{process.dlopen({exports:{}}, process.cwd()+"/libllama-bench-in-process.so")}catch(e){}'
arm() {
    case $1 in
        A) ./llama-bench $ARGS 2>/dev/null | ms ;;
        B) LLAMA_BENCH_ARGS="$ARGS" node -e "$JS" 2>/dev/null | ms ;;
        C) MODEL=$MODEL REPS=5 node "$here/ours-tg.mjs" 2>/dev/null | tail -1 ;;
        D) LLAMA_BENCH_ARGS="$ARGS" ./dlopen-main "$B/libllama-bench-in-process.so" 2>/dev/null | ms ;;
        *) echo "unknown arm $1" >&2; exit 2 ;;
    esac
}
cd "$B"
for round in $(seq 1 "${ROUNDS:-8}"); do
    for a in ${ARMS:-A B C D}; do echo "$a $round $(arm "$a") load=$(cut -d' ' -f1 /proc/loadavg)"; done
done
