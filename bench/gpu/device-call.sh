#!/usr/bin/env bash
# The prepared device calls (a GPU session has 15 minutes of device time, the machine's start included; one command
# at most 10). Make the bundle here first (bench/gpu/make-bundle.sh), then, with the device tool's `run`:
#   call 1: command "DEADLINE=560 HARD_STOP=585 bash bench/gpu/device-call.sh --phases unpack,llama,addon,models,bench-q4-50,llamabench,tggap"
#           carry [".devbundle"], timeout_s 600
#   call 2, AT ONCE (the machine stays warm only 30 s), with D = budget_left_s after call 1 − 45:
#           command "DEADLINE=D HARD_STOP=D+15 bash bench/gpu/device-call.sh --phases unpack,bench-q4-25,llamabench,regret"
#           carry [".devbundle"], timeout_s D+30
# On 2026-11-28 (H200, bench/results/2026-11-28-h200) call 1 took 423 s without tggap (machine start ≈ 33 s, CUDA build
# 162 s, models 40 s, bench at 50% 187 s, llama-bench 18 s) and call 2 379 s: tggap (our decode against llama-bench's,
# bench/gpu/tgGap.mjs) uses what call 1 has left, stopping itself before the deadline.
# Measured on the first run (H200, bench/results/2026-11-27-h200-partial): machine start ≈ 30 s, unpack 3 s, CUDA
# build 224 s, addon 13 s, models 36 s; on the second (H100, bench/results/2026-11-27-h100): CUDA build 176 s, models
# 49 s, bench at 50% 163 s (10 s profiles), so call 1 ended 180 s before its deadline: its llama-bench runs there now. Each call runs bench/gpu/run-on-gpu.sh with its deadline under a hard stop,
# so that what was measured is always packed and comes back: $OUT gets results.tar.xz (every log, report, profile and
# table of both calls so far), run-on-gpu.log, phases.tsv and console.log — under the device tool's limit of 8 files.
# Proven here without a GPU: OUT=/tmp/out bash bench/gpu/device-call.sh --dry-run-cpu
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
: "${OUT:?OUT must name the folder whose files come back}"
BUNDLE="${BUNDLE:-.devbundle}"
WORK="${WORK:-$PWD/bench/tmp/gpu-work}"
RESULTS="$WORK/out"
mkdir -p "$RESULTS" "$OUT"
# The CUDA toolkit: nvcc for CMake, and its runtime libraries (cudart, cuBLAS) for the addon and llama-bench.
[ -d /usr/local/cuda/bin ] && ! command -v nvcc >/dev/null && export PATH="$PATH:/usr/local/cuda/bin"
if command -v nvcc >/dev/null; then
    CUDA_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
    export LD_LIBRARY_PATH="$CUDA_DIR/lib64:$CUDA_DIR/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
fi
{ echo "nvcc: $(command -v nvcc || echo none); g++: $(g++ --version 2>/dev/null | head -1); patch: $(command -v patch || echo none)"
  grep -m1 'model name' /proc/cpuinfo; grep -o -m1 'amx_[a-z0-9]*\|avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; } > "$OUT/console.log"
# GNU patch (native/install.mjs applies the addon patch with it): the bundle carries one in case the image lacks it.
if ! command -v patch >/dev/null && [ -x "$BUNDLE/bin/patch" ]; then export PATH="$PWD/$BUNDLE/bin:$PATH"; fi
timeout --signal=TERM --kill-after=10 "${HARD_STOP:-560}" \
    bash "$BUNDLE/run-on-gpu.sh" --bundle "$BUNDLE" --work "$WORK" --out "$RESULTS" --deadline "${DEADLINE:-520}" "$@" \
    >> "$OUT/console.log" 2>&1
echo "run-on-gpu.sh exit $?" >> "$OUT/console.log"
cp "$RESULTS/run-on-gpu.log" "$RESULTS/phases.tsv" "$OUT/" 2>/dev/null
tar -C "$RESULTS" -cJf "$OUT/results.tar.xz" . && ls -la "$OUT"
tail -40 "$OUT/console.log"
