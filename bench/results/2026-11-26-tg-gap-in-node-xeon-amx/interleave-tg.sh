#!/bin/bash
# Interleaved tg32 timings (ms per generated token) of the small parity model, CPU, 1 thread, 5 samples per arm and
# round: ../2026-11-25-pp-gap-in-node-epyc2c/interleave.sh (build its probes first with its build.sh) with the tg
# phase and ours-tg.mjs as arm C. Arms: A stock llama-bench, B its code inside Node.js, C ours, D its code inside a
# plain C program.
# Usage: MODEL=/tmp/tensorwise-parity-small.gguf ARMS="A B C D" ROUNDS=8 bash interleave-tg.sh > out.txt
here=$(cd "$(dirname "$0")" && pwd)
MODEL=${MODEL:-/tmp/tensorwise-parity-small.gguf} PHASE="-p 0 -n 32 -r 5" PER_TOKEN=32 OURS="$here/ours-tg.mjs" REPS=5 \
    ROUNDS=${ROUNDS:-8} exec bash "$here/../2026-11-25-pp-gap-in-node-epyc2c/interleave.sh" "$@"
