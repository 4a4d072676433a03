#!/bin/bash
# Interleaved pp64 timings of the ≈1 GiB Q8_0 parity model, CPU, 1 thread, 3 samples per arm and round (llama-bench
# also runs its own warm-up). Each line: arm, round, the samples in ms. Summarize with `python3 summarize.py <file>`.
# Usage: ARMS="A B C" ROUNDS=10 bash interleave.sh [llama-bench folder] > out.txt   (after bash build.sh)
# Arms:
#   A   stock llama-bench, its own process
#   B   the same llama-bench code inside a Node.js process (process.dlopen of libllama-bench-in-process.so)
#   C   ours: PlacedModel + generateGreedy (ours.mjs; needs `npx tsc -p tsconfig.json` first)
#   D   the same llama-bench code inside a plain C program (dlopen-main.c)
#   Dn  as D, the C program linked -no-pie like /usr/bin/node
#   E   as B, node --single-threaded (no V8 platform worker threads)
#   Bj  as B, node --jitless (no JIT code space)
#   At, Bt  as A and B with glibc's mmap threshold pinned at 128 KiB (no dynamic raise)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${1:-$(dirname "$(ls -t "$root"/build/native/llama-bench/cpu-*/llama-bench | head -1)")}
MODEL=${MODEL:-/tmp/tensorwise-parity-large.gguf}
# Overridable for other phases (../2026-11-26-tg-gap-in-node-xeon-amx/interleave-tg.sh): llama-bench's phase flags,
# a divisor that turns a sample into ms per token (unset: whole ms per sample), and arm C's script and sample count.
PHASE=${PHASE:--p 64 -n 0 -r 3}
ARGS="-m $MODEL -ngl 0 -ub 512 -t 1 -fa 0 $PHASE -o jsonl"
OURS=${OURS:-$here/ours.mjs}
REPS=${REPS:-3}
if [ -n "${PER_TOKEN:-}" ]; then ROUND="round(x/1e6/$PER_TOKEN, 3)"; else ROUND="round(x/1e6)"; fi
ms() { python3 -c "import sys,json; [print(json.dumps([$ROUND for x in json.loads(l)['samples_ns']])) for l in sys.stdin if l.startswith('{')]"; }
JS='try{process.dlopen({exports:{}}, process.cwd()+"/libllama-bench-in-process.so")}catch(e){}'
T=glibc.malloc.mmap_threshold=131072
arm() {
    case $1 in
        A) ./llama-bench $ARGS 2>/dev/null | ms ;;
        At) GLIBC_TUNABLES=$T ./llama-bench $ARGS 2>/dev/null | ms ;;
        B) LLAMA_BENCH_ARGS="$ARGS" node -e "$JS" 2>/dev/null | ms ;;
        Bt) GLIBC_TUNABLES=$T LLAMA_BENCH_ARGS="$ARGS" node -e "$JS" 2>/dev/null | ms ;;
        Bj) LLAMA_BENCH_ARGS="$ARGS" node --jitless -e "$JS" 2>/dev/null | ms ;;
        E) LLAMA_BENCH_ARGS="$ARGS" node --single-threaded -e "$JS" 2>/dev/null | ms ;;
        D) LLAMA_BENCH_ARGS="$ARGS" ./dlopen-main "$B/libllama-bench-in-process.so" 2>/dev/null | ms ;;
        Dn) LLAMA_BENCH_ARGS="$ARGS" ./dlopen-main-nopie "$B/libllama-bench-in-process.so" 2>/dev/null | ms ;;
        C) MODEL=$MODEL REPS=$REPS node "$OURS" 2>/dev/null | tail -1 ;;
        *) echo "unknown arm $1" >&2; exit 2 ;;
    esac
}
cd "$B"
for round in $(seq 1 "${ROUNDS:-10}"); do
    for a in ${ARMS:-A B C}; do echo "$a $round $(arm "$a") load=$(cut -d' ' -f1 /proc/loadavg)"; done
done
