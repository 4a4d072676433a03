#!/usr/bin/env bash
# GPU validation, run THERE (a CUDA machine with no internet and no Node.js: nvcc, cmake, ninja, git, patch, python3),
# from the repository root with the bundle from bench/gpu/make-bundle.sh in .devbundle/:
#
#   bash .devbundle/run-on-gpu.sh [--bundle DIR] [--work DIR] [--out DIR] [--deadline SECONDS] [--phases LIST] [--dry-run-cpu]
#
# Phases (each idempotent: a finished phase leaves a stamp and is skipped next time, so a second call continues).
# On the first GPU run (H200, 2026-11-27: bench/results/2026-11-27-h200-partial/README.md) the phases before the
# benchmark took 276 s (CUDA build 224 s), so the default list needs TWO device calls on one warm machine — see
# bench/gpu/device-call.sh for the exact pair (a session has 15 device minutes; one command at most 10):
#   unpack     Node binary, the app, the llama.cpp source
#   llama      llama.cpp shared libraries (CUDA sm_90, FA off; CPU tuned for this machine) + llama-quantize
#   addon      the patched node-llama-cpp addon built against them with native/install.mjs, installed as the
#              node-llama-cpp local build linux-x64-cuda; stock llama-bench is then built in the background
#   models     Llama-3.2-3B-shaped F16 with `tensorwise make-model`, Q4_K_M with llama-quantize
#   bench-q4-50 `tensorwise bench` on Q4_K_M at 50% of the weights: prompts 64/2048, gen 32, strategies layers, fit,
#              cpu, optimal, 2 repeats, all cores (--threads), a 20 s profile
#   bench-q4-25 the same at 25%, without cpu (its plan does not depend on the budget)
#   llamabench stock llama-bench on the layers / fit cells of every finished report, built by the same builder as
#              `tensorwise bench --llama-bench` against the addon's own libraries
#   tggap      our decode against stock llama-bench's on -ngl 0 (op offload off and on) and -ngl 3, all cores and one
#              less, in a fresh process and after an in-process profile (bench/gpu/tgGap.mjs), out/tg-gap/tg-gap.tsv
#   regret     planner regret, bench/drivers/bench-regret.mjs on the Q4_K_M model at a 50% budget, prompts 64/2048, gen 32:
#              stock llama-bench brute-forced over a grid sized for what is left of the call (GPU hidden, -ngl 0/14/all,
#              FFN → CPU; -ub 512/2048; op offload on/off; f16 KV, -fa 0 — this CUDA build has no flash-attention
#              kernels; all cores; mmap off) vs tensorwise's plan through llama-bench and through its runtime; extra
#              arguments from $REGRET_ARGS (they win over the grid's)
# Not in the default list (a second call, `--phases unpack,llama,addon,moe-model,bench-moe`, continues from the stamps):
#   bench-f16  the bench-q4 grid on the F16 model
#   moe-model  the Qwen3-30B-A3B-shaped MoE (48 layers, 128 experts, 8 used) written as Q4_0 by `tensorwise make-model`
#              and requantized to Q4_K_M (Q4_0 first: an F16 of 30B parameters would not fit the 64 GiB disk)
#   bench-moe  `tensorwise bench` on it: budgets 25/50/75% of its weights, layers, fit, cpu-moe, n-cpu-moe, oato, optimal
# Everything goes to $OUT (default $OUT from the device tool, else WORK/out), with this machine's planner profile
# (profiles/: the profile-*.json this run measured) and the Q4_K_M model's `tensorwise inspect --json`. A deadline (default
# 520 s from start) stops each benchmark with SIGTERM in time: `tensorwise bench` keeps every finished run, and
# bench-regret.mjs records what it could not run as skipped. phases.tsv has each phase's seconds.
# --dry-run-cpu: the same plumbing on a machine without CUDA: CPU-only llama.cpp, the "small" synthetic model,
#   a tiny grid — to prove the script here.
set -euo pipefail
START=$(date +%s)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUNDLE="$HERE"
WORK="$PWD/bench/tmp/gpu-work"
DEADLINE=520
DRY=0
PHASES="unpack,llama,addon,models,bench-q4-50,bench-q4-25,llamabench,regret"
OUT_DIR="${OUT:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --bundle) BUNDLE="$(realpath "$2")"; shift 2 ;;
        --work) WORK="$(realpath -m "$2")"; shift 2 ;;
        --out) OUT_DIR="$(realpath -m "$2")"; shift 2 ;;
        --deadline) DEADLINE="$2"; shift 2 ;;
        --phases) PHASES="$2"; shift 2 ;;
        --dry-run-cpu) DRY=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$DRY" = 1 ] && [ "$WORK" = "$PWD/bench/tmp/gpu-work" ] && WORK="$PWD/bench/tmp/gpu-dry"
OUT_DIR="${OUT_DIR:-$WORK/out}"
mkdir -p "$WORK" "$OUT_DIR"
# the app's caches (machine profiles) in a folder of this run's own, so that profiles/ below holds exactly the ones
# this run measured and planned with, as electron/engine/planner/testing/recordedBench.ts reads a recording
export XDG_CACHE_HOME="$WORK/cache"
LOG="$OUT_DIR/run-on-gpu.log"
JOBS="$(nproc)"
APP="$WORK/app"
LLAMA_SRC="$WORK/llama.cpp"
LLAMA_BUILD="$WORK/llama-build"
NODE_DIR="$WORK/node/bin"
export PATH="$NODE_DIR:$PATH"
export CMAKE_GENERATOR="${CMAKE_GENERATOR:-$(command -v ninja >/dev/null && echo Ninja || echo 'Unix Makefiles')}"
if [ "$DRY" = 1 ]; then VARIANT=cpu; PKG=linux-x64; GPU=cpu; else VARIANT=cuda; PKG=linux-x64-cuda; GPU=cuda; fi

log() { echo "[run-on-gpu +$(( $(date +%s) - START ))s] $*" | tee -a "$LOG" >&2; }
left() { echo $(( DEADLINE - ($(date +%s) - START) )); }
want() { case ",$PHASES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
done_stamp() { [ -f "$WORK/.done-$1" ]; }
mark() { touch "$WORK/.done-$1"; }
# phases.tsv: one line per phase run in this call, "<phase>\t<seconds>" (timed() before, took() after)
PHASE_T0=$(date +%s)
timed() { PHASE_T0=$(date +%s); }
took() { printf '%s\t%s\n' "$1" "$(( $(date +%s) - PHASE_T0 ))" >> "$OUT_DIR/phases.tsv"; }
tw() { (cd "$APP" && node bin/tensorwise.mjs "$@"); }

log "bundle $BUNDLE, work $WORK, out $OUT_DIR, mode $([ "$DRY" = 1 ] && echo dry-run-cpu || echo cuda), $JOBS cores, deadline ${DEADLINE}s"
{ uname -a; command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
  command -v nvcc >/dev/null && nvcc --version | tail -2 || true; cmake --version | head -1; lscpu | grep -E 'Model name|^CPU\(s\)' || true
  free -g | head -2; } > "$OUT_DIR/machine.txt" 2>&1

# --- unpack -------------------------------------------------------------------------------------------------------
# The app is re-extracted whenever the bundle's app.tar.xz changed; the llama.cpp source only when its commit changed
# (re-extracting it would make the build tree rebuild everything).
if want unpack; then
    timed
    APP_SHA="$(sha256sum "$BUNDLE/app.tar.xz" | cut -c1-16)"
    if [ ! -x "$NODE_DIR/node" ]; then
        log "unpacking node"
        mkdir -p "$NODE_DIR" && xz -dc "$BUNDLE/node.xz" > "$NODE_DIR/node.tmp" && chmod +x "$NODE_DIR/node.tmp" && mv "$NODE_DIR/node.tmp" "$NODE_DIR/node"
    fi
    if [ "$(cat "$WORK/.app-sha" 2>/dev/null)" != "$APP_SHA" ]; then
        log "unpacking the app"
        rm -rf "$APP" && mkdir -p "$APP" && xz -dc "$BUNDLE/app.tar.xz" | tar -C "$APP" -xf -
        echo "$APP_SHA" > "$WORK/.app-sha"
        rm -f "$WORK/.done-addon"
    fi
    BUNDLE_COMMIT="$(xz -dc "$BUNDLE/llama.cpp.tar.xz" | tar -xOf - llama.cpp/COMMIT)"
    if [ "$(cat "$LLAMA_SRC/COMMIT" 2>/dev/null)" != "$BUNDLE_COMMIT" ]; then
        log "unpacking llama.cpp $BUNDLE_COMMIT"
        rm -rf "$LLAMA_SRC" "$LLAMA_BUILD" "$WORK/.done-llama" "$WORK/.done-addon"
        xz -dc "$BUNDLE/llama.cpp.tar.xz" | tar -C "$WORK" -xf -
    fi
    node -v >/dev/null
    took unpack
fi
log "node $(node -v), llama.cpp $(cat "$LLAMA_SRC/COMMIT" 2>/dev/null || echo '?')"

# --- llama.cpp ----------------------------------------------------------------------------------------------------
if want llama && ! done_stamp llama; then
    timed
    log "configuring llama.cpp ($VARIANT)"
    BACKEND_FLAGS=(-DGGML_CUDA=OFF)
    # CUDA for the H100 only (sm_90), flash attention kernels off (build time; node-llama-cpp runs with FA off too).
    # CMAKE_CUDA_ARCHITECTURES is explicit, so GGML_NATIVE only tunes the CPU backend for this machine's CPU — the
    # CPU-resident part of every mixed placement runs there, and a generic x86-64 build (no AVX2) would distort it.
    # GGML_NATIVE is incompatible with GGML_BACKEND_DL, so the backends are linked into libggml.so (registered
    # statically; node-llama-cpp's dlopen scan then finds nothing extra to load, which is harmless).
    [ "$DRY" = 0 ] && BACKEND_FLAGS=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=OFF)
    NATIVE="${GGML_NATIVE:-ON}"
    # AMX off in a native build: on a Xeon with AMX (a VM here), the native CPU backend's AMX matmul
    # (ggml/src/ggml-cpu/amx/mmq.cpp) died with SIGILL at `tilezero` in the profiler — AMX tiles need a per-process
    # permission (arch_prctl ARCH_REQ_XCOMP_PERM) that ggml only asks for in ggml_backend_amx_buffer_type(). GCC lets an
    # explicit -mno-… win over -march=native whatever the order. GGML_CPU_EXTRA_FLAGS="" keeps AMX.
    CPU_FLAGS="${GGML_CPU_EXTRA_FLAGS--mno-amx-tile -mno-amx-int8 -mno-amx-bf16}"
    BACKEND_DL=OFF; [ "$NATIVE" = OFF ] && BACKEND_DL=ON
    cmake -S "$LLAMA_SRC" -B "$LLAMA_BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL="$BACKEND_DL" \
        -DGGML_NATIVE="$NATIVE" -DCMAKE_C_FLAGS="$CPU_FLAGS" -DCMAKE_CXX_FLAGS="$CPU_FLAGS" "${BACKEND_FLAGS[@]}" -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF > "$OUT_DIR/llama-configure.log" 2>&1 || { tail -30 "$OUT_DIR/llama-configure.log"; exit 1; }
    TARGETS=(llama llama-common ggml ggml-base ggml-cpu llama-quantize)
    [ "$DRY" = 0 ] && TARGETS+=(ggml-cuda)
    log "building ${TARGETS[*]} with $JOBS jobs"
    cmake --build "$LLAMA_BUILD" --parallel "$JOBS" --target "${TARGETS[@]}" > "$OUT_DIR/llama-build.log" 2>&1 || { tail -40 "$OUT_DIR/llama-build.log"; exit 1; }
    ls -la "$LLAMA_BUILD/bin" > "$OUT_DIR/llama-libs.txt"
    mark llama
    took llama
    log "llama.cpp built"
fi
BIN="$LLAMA_BUILD/bin"

# --- addon --------------------------------------------------------------------------------------------------------
if want addon && ! done_stamp addon; then
    timed
    command -v patch >/dev/null || { log "GNU patch is required to patch node-llama-cpp's addon sources"; exit 1; }
    # native/install.mjs builds against node_modules/@node-llama-cpp/<pkg>/bins/<pkg>: put the fresh libraries there
    # (libllama.so, libggml.so, libggml-base.so, libllama-common.so + the dlopen'ed backends), with node-llama-cpp's
    # build metadata and a placeholder addon (install.mjs only checks it exists; the patched one replaces it).
    PREBUILT="$APP/node_modules/@node-llama-cpp/$PKG/bins/$PKG"
    rm -rf "$APP/node_modules/@node-llama-cpp/$PKG" && mkdir -p "$PREBUILT"
    cp -P "$BIN"/lib*.so* "$PREBUILT/"
    if [ "$DRY" = 1 ]; then sed 's/"gpu":"cuda"/"gpu":false/' "$BUNDLE/nlc-build-metadata.json" > "$PREBUILT/_nlcBuildMetadata.json"
    else cp "$BUNDLE/nlc-build-metadata.json" "$PREBUILT/_nlcBuildMetadata.json"; fi
    : > "$PREBUILT/llama-addon.node"
    echo "{\"name\":\"@node-llama-cpp/$PKG\",\"version\":\"0.0.0-local\"}" > "$APP/node_modules/@node-llama-cpp/$PKG/package.json"
    mkdir -p "$APP/build/native" && rm -rf "$APP/build/native/llama.cpp" && ln -s "$LLAMA_SRC" "$APP/build/native/llama.cpp"
    log "building the patched addon (native/install.mjs, variant $VARIANT)"
    (cd "$APP" && TENSORWISE_NATIVE_VARIANTS=$VARIANT node native/install.mjs --force) > "$OUT_DIR/addon-build.log" 2>&1 || { tail -30 "$OUT_DIR/addon-build.log"; exit 1; }
    # The placeholder prebuilt must not be mistaken for a usable binary later.
    rm -rf "$APP/node_modules/@node-llama-cpp/$PKG"
    tw devices --gpu "$GPU" > "$OUT_DIR/devices.txt" 2>&1 || { cat "$OUT_DIR/devices.txt"; exit 1; }
    mark addon
    took addon
    log "addon installed: $(grep -m1 -i "buffer\|device" "$OUT_DIR/devices.txt" || true)"
fi
# Stock llama-bench (llamabench and regret need it) compiles in the background while the models are written.
LLAMA_BENCH_PID=""
if { want llamabench || want regret; } && [ -f "$WORK/.done-addon" ]; then
    (cd "$APP" && node --input-type=module -e "
        const {ensureLlamaBench} = await import('./dist/electron/engine/bench/llamaBench/buildLlamaBench.js');
        const b = ensureLlamaBench('$VARIANT', {onProgress: (m) => console.error(m)});
        console.error('llama-bench ready: ' + b.program + (b.built ? ' (built)' : ' (cached)'));") > "$OUT_DIR/llama-bench-build.log" 2>&1 &
    LLAMA_BENCH_PID=$!
fi
wait_llama_bench() {
    [ -n "$LLAMA_BENCH_PID" ] || return 0
    timed; wait "$LLAMA_BENCH_PID" || log "llama-bench build failed (see llama-bench-build.log)"; took llama-bench-wait
    LLAMA_BENCH_PID=""
}

# --- models -------------------------------------------------------------------------------------------------------
MODELS="$WORK/models"
if [ "$DRY" = 1 ]; then PRESET=small; else PRESET=llama3.2-3b; fi
F16="$MODELS/$PRESET-f16.gguf"
Q4="$MODELS/$PRESET-q4_k_m.gguf"
if want models && ! done_stamp models; then
    timed
    mkdir -p "$MODELS"
    log "writing the $PRESET-shaped F16 model"
    tw make-model "$F16" --preset "$PRESET" --type f16 2>&1 | tail -1 | tee -a "$LOG" >&2
    log "quantizing to Q4_K_M"
    "$BIN/llama-quantize" "$F16" "$Q4" Q4_K_M "$JOBS" > "$OUT_DIR/quantize.log" 2>&1 || { tail -20 "$OUT_DIR/quantize.log"; exit 1; }
    tw inspect "$Q4" > "$OUT_DIR/model-q4_k_m.txt" 2>&1 || true
    tw inspect "$Q4" --json > "$OUT_DIR/model-q4_k_m.json" 2>/dev/null || true
    want bench-f16 || rm -f "$F16"   # the F16 is only benchmarked by bench-f16 (disk)
    mark models
    took models
fi

# --- benchmarks ---------------------------------------------------------------------------------------------------
if [ "$DRY" = 1 ]; then
    GRID=(--prompts 32,64 --gens 8,16 --repeats 1 --warmup 4)
else
    # all 16 cores (the planner's own choice there on the first H200 run: 1…8 threads predicted 1.4–10× slower: the
    # thread scan took 171 s of that run's 436 s bench, bench/results/2026-11-27-h200-partial), and the default 20 s
    # profile: a 10 s one left the H100 run's GPU with cold decode timings only, and the planner then did not use the
    # GPU (bench/results/2026-11-27-h100/README.md; the profiler now times each device's first prefill batch anyway)
    GRID=(--prompts 64,2048 --gens 32 --repeats "${REPEATS:-2}" --threads "$JOBS" --profile-seconds 20)
fi
run_bench() { # $1 name, $2 model, then bench arguments (added to GRID; a leading --only replaces it)
    local name="$1" model="$2" budget
    shift 2
    local grid=("${GRID[@]}" "$@")
    [ "${1:-}" = --only ] && shift && grid=("$@")
    budget=$(( $(left) - 20 ))
    if [ "$budget" -lt 60 ]; then log "skipping bench $name: ${budget}s left"; return 0; fi
    log "tensorwise bench $name (${budget}s before SIGTERM)"
    timed
    set +e
    (cd "$APP" && timeout --signal=TERM --kill-after=15 "$budget" node bin/tensorwise.mjs bench "$model" --gpu "$GPU" \
        "${grid[@]}" --out "$OUT_DIR/bench-$name") > "$OUT_DIR/bench-$name.txt" 2> "$OUT_DIR/bench-$name.log"
    local rc=$?
    set -e
    took "bench-$name"
    log "bench $name exit $rc ($([ $rc = 0 ] && echo complete || echo 'stopped; finished runs are kept'))"
    tail -5 "$OUT_DIR/bench-$name.txt" >&2 || true
}
# Two phases, so that two device calls can share them: 50% with the budget-free cpu plan, then 25% without it.
if want bench-q4-50 && ! done_stamp bench-q4-50; then
    run_bench q4_k_m-50 "$Q4" --budgets 50% --strategies layers,fit,cpu,optimal
    [ -f "$OUT_DIR/bench-q4_k_m-50/report.json" ] && mark bench-q4-50
fi
if want bench-q4-25 && ! done_stamp bench-q4-25; then
    run_bench q4_k_m-25 "$Q4" --budgets 25% --strategies layers,fit,optimal
    [ -f "$OUT_DIR/bench-q4_k_m-25/report.json" ] && mark bench-q4-25
fi
if want llamabench; then
    wait_llama_bench
    timed
    for report in "$OUT_DIR"/bench-*/report.json; do
        [ -f "$report" ] || continue
        # a report compared in an earlier call is not compared again (the second call continues)
        stamp="$(dirname "$report")/llama-bench/.done"
        [ -f "$stamp" ] && continue
        log "llama-bench on the layers/fit cells of $report"
        if (cd "$APP" && node bench/gpu/runLlamaBench.mjs "$report" "$(( $(left) - 10 ))") >> "$LOG" 2>&1; then touch "$stamp"
        else log "llama-bench: some cells failed (see log)"; fi
    done
    took llamabench
fi
# Our decode against stock llama-bench's on the same loads, taking turns, in a fresh process and then after an
# in-process profile (bench/gpu/tgGap.mjs): the 2026-11-28 H200 run measured ours at 0.59-0.71x in decode.
if want tggap && ! done_stamp tggap; then
    wait_llama_bench
    budget=$(( $(left) - 15 ))
    if [ "$DRY" = 0 ] && [ ! -f "$Q4" ]; then log "skipping tg-gap: no $Q4 (run the models phase first)"
    elif [ "$budget" -lt 60 ]; then log "skipping tg-gap: ${budget}s left"; else
        log "tg-gap (${budget}s)"
        timed
        if (cd "$APP" && node bench/gpu/tgGap.mjs "$Q4" "$OUT_DIR/tg-gap" "$budget" "$GPU") >> "$LOG" 2>&1; then mark tggap
        else log "tg-gap failed (see log)"; fi
        took tggap
    fi
fi
if want bench-f16 && ! done_stamp bench-f16 && [ "$DRY" = 0 ]; then run_bench f16 "$F16" --budgets 25,50% --strategies layers,fit,cpu,optimal; [ -f "$OUT_DIR/bench-f16/report.json" ] && mark bench-f16; fi

# --- mixture of experts -------------------------------------------------------------------------------------------
# Qwen3-30B-A3B's shape (the `qwen3-30b-a3b` preset; `mixtral-mini` in the dry run). Random weights, so requantizing
# the writer's Q4_0 to Q4_K_M loses nothing that matters for speed; the Q4_0 is deleted afterwards (disk).
if [ "$DRY" = 1 ]; then MOE_PRESET=mixtral-mini; else MOE_PRESET=qwen3-30b-a3b; fi
MOE_Q4="$MODELS/$MOE_PRESET-q4_k_m.gguf"
if want moe-model && ! done_stamp moe-model; then
    mkdir -p "$MODELS"
    log "writing the $MOE_PRESET-shaped MoE model as Q4_0 ($(df -h --output=avail "$MODELS" | tail -1 | tr -d ' ') free)"
    tw make-model "$MODELS/$MOE_PRESET-q4_0.gguf" --preset "$MOE_PRESET" --type q4_0 2>&1 | tail -1 | tee -a "$LOG" >&2
    log "requantizing it to Q4_K_M"
    "$BIN/llama-quantize" --allow-requantize "$MODELS/$MOE_PRESET-q4_0.gguf" "$MOE_Q4" Q4_K_M "$JOBS" > "$OUT_DIR/quantize-moe.log" 2>&1 \
        || { tail -20 "$OUT_DIR/quantize-moe.log"; exit 1; }
    rm -f "$MODELS/$MOE_PRESET-q4_0.gguf"
    tw inspect "$MOE_Q4" > "$OUT_DIR/model-moe-q4_k_m.txt" 2>&1 || true
    mark moe-model
fi
if [ "$DRY" = 1 ]; then
    MOE_GRID=(--budgets 50% --prompts 32,64 --gens 8 --strategies layers,cpu-moe,n-cpu-moe,optimal --repeats 1 --warmup 4)
else
    MOE_GRID=(--budgets 25,50,75% --prompts 32,512,2048 --gens 32,128 --strategies layers,fit,cpu-moe,n-cpu-moe,oato,optimal
              --repeats "${REPEATS:-2}")
fi
if want bench-moe && ! done_stamp bench-moe && [ -f "$MOE_Q4" ]; then
    run_bench moe-q4_k_m "$MOE_Q4" --only "${MOE_GRID[@]}"
    [ -f "$OUT_DIR/bench-moe-q4_k_m/report.json" ] && mark bench-moe
fi
# --- planner regret -----------------------------------------------------------------------------------------------
# The same script as on the development machine (bench/README.md, "Planner regret"), with a grid that fits one call:
# about 40 configurations over TTFT at 64/512/2048 and TPOT at 32, each stopped at 2× the cell's best so far. The
# deadline gives each cell an equal share of the time left and records what did not fit as skipped.
if want regret; then
    wait_llama_bench
    if [ "$DRY" = 1 ]; then
        REGRET_GRID=(--quick --models tiny)
    else
        REGRET_GRID=(--models "$Q4" --budget 50% --prompts 64,2048 --gen 32 --placements hidden,layers,ffn-cpu --ngl 14
                     --ubatches 512,2048 --nopo 0,1 --ctk f16 --ctv f16 --fa 0 --mmap 0 --threads "$JOBS"
                     --scan-repeats 1 --repeats 2 --rounds 1 --finalists 2)
    fi
    budget=$(( $(left) - 20 ))
    if [ "$DRY" = 0 ] && [ ! -f "$Q4" ]; then log "skipping regret: no $Q4 (run the models phase first)"
    elif [ "$budget" -lt 60 ]; then log "skipping regret: ${budget}s left"; else
        log "planner regret (${budget}s)"
        timed
        set +e
        # shellcheck disable=SC2086
        (cd "$APP" && node bench/drivers/bench-regret.mjs --gpu "$GPU" "${REGRET_GRID[@]}" --deadline "$budget" ${REGRET_ARGS:-} --out "$OUT_DIR/regret") \
            > "$OUT_DIR/regret.txt" 2> "$OUT_DIR/regret.log"
        rc=$?
        took regret
        log "regret exit $rc"
        set -e
        cat "$OUT_DIR/regret.txt" >&2 || true
    fi
fi
wait_llama_bench
# The planner's machine profile(s) measured here (the recorded-machine test plans with them).
mkdir -p "$OUT_DIR/profiles" && cp "$XDG_CACHE_HOME"/tensorwise/profile-*.json "$OUT_DIR/profiles/" 2>/dev/null || true
log "done; results in $OUT_DIR"
