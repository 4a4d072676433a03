#!/usr/bin/env bash
# Prepares the GPU validation bundle (run HERE, on a machine with the project installed and built):
#   node.xz           this machine's Node binary (process.execPath), xz'd
#   app.tar.xz        dist/, bin/, package.json, native/ (addon patch + sources), bench/gpu/, bench/drivers/bench-regret.mjs
#                     (with the two helpers it imports), and the runtime
#                     node_modules (production dependency closure) WITHOUT node-llama-cpp's prebuilt binaries,
#                     local builds or git bundle
#   llama.cpp.tar.xz  the exact llama.cpp source of node-llama-cpp's binaries (from its git bundle), trimmed to what
#                     the CUDA/CPU libraries, llama-quantize and llama-bench need
#   nlc-build-metadata.json  node-llama-cpp's build metadata for a cuda build (the local build needs it)
#   run-on-gpu.sh     the script to run there; MANIFEST.txt with sizes and hashes
# Usage: bench/gpu/make-bundle.sh [bundle dir, default .devbundle]   (total must stay under 64 MiB)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUNDLE="$(realpath -m "${1:-$ROOT/.devbundle}")"
LIMIT_BYTES=$((64 * 1024 * 1024))
NODE_BIN="$(node -p process.execPath)"
NLC="$ROOT/node_modules/node-llama-cpp"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
log() { echo "[make-bundle] $*" >&2; }

[ -f "$ROOT/dist/electron/cli/main.js" ] || { log "the project is not built (npm run build)"; exit 1; }
[ -f "$NLC/llama/gitRelease.bundle" ] || { log "node-llama-cpp's llama.cpp git bundle is missing"; exit 1; }
mkdir -p "$BUNDLE"
rm -f "$BUNDLE"/{app.tar.xz,llama.cpp.tar.xz,nlc-build-metadata.json,run-on-gpu.sh,MANIFEST.txt}

# 1. Node binary (kept from a previous bundle when it is the same binary: xz'ing it takes minutes on 2 cores).
NODE_SHA="$(sha256sum "$NODE_BIN" | cut -d' ' -f1)"
if [ -f "$BUNDLE/node.xz" ] && [ "$(cat "$BUNDLE/node.sha256" 2>/dev/null)" = "$NODE_SHA" ]; then
    log "node.xz is up to date"
else
    log "xz'ing $NODE_BIN ($(node -v))"
    xz -T0 -6 -c "$NODE_BIN" > "$BUNDLE/node.xz.tmp" && mv "$BUNDLE/node.xz.tmp" "$BUNDLE/node.xz"
    echo "$NODE_SHA" > "$BUNDLE/node.sha256"
fi

# 2. The app and its runtime node_modules.
log "collecting the production dependency closure"
cd "$ROOT"
npm ls --omit=dev --all --parseable 2>/dev/null | sed "s#^$ROOT/##" | grep '^node_modules/' | sort -u \
    | grep -v '^node_modules/@node-llama-cpp/' > "$STAGE/deps.txt"
# keep only top-most paths (a nested node_modules comes with its parent)
awk '{ keep = 1; for (p in seen) if (index($0, p "/") == 1) keep = 0; if (keep) { seen[$0] = 1; print } }' "$STAGE/deps.txt" > "$STAGE/top.txt"
for required in node_modules/node-llama-cpp node_modules/highs node_modules/node-addon-api node_modules/node-api-headers; do
    grep -qx "$required" "$STAGE/top.txt" || { log "missing runtime dependency $required"; exit 1; }
done
tar -C "$ROOT" -cf "$STAGE/app.tar" \
    --exclude='node_modules/node-llama-cpp/llama/localBuilds' \
    --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' \
    --exclude='node_modules/node-llama-cpp/bins' \
    --exclude='*.map' --exclude='dist/renderer' \
    package.json bin dist native bench/gpu bench/drivers/bench-regret.mjs scripts/scriptArgs.mjs bench/drivers/benchModels.mjs $(cat "$STAGE/top.txt")
xz -T0 -9 -c "$STAGE/app.tar" > "$BUNDLE/app.tar.xz"

# 3. Trimmed llama.cpp source (the same commit as the prebuilt binaries).
log "cloning llama.cpp from node-llama-cpp's git bundle"
git -c advice.detachedHead=false clone --quiet "$NLC/llama/gitRelease.bundle" "$STAGE/llama.cpp"
SRC="$STAGE/llama.cpp"
COMMIT="$(git -C "$SRC" rev-parse HEAD)"
mkdir -p "$STAGE/trim/llama.cpp/tools" "$STAGE/trim/llama.cpp/ggml/src"
for keep in CMakeLists.txt LICENSE cmake include src common vendor; do cp -r "$SRC/$keep" "$STAGE/trim/llama.cpp/"; done
cp -r "$SRC/tools/quantize" "$SRC/tools/llama-bench" "$STAGE/trim/llama.cpp/tools/"
cp -r "$SRC/ggml/CMakeLists.txt" "$SRC/ggml/cmake" "$SRC/ggml/include" "$STAGE/trim/llama.cpp/ggml/"
# ggml core sources + the CPU and CUDA backends only (the others are add_subdirectory'd only when enabled)
find "$SRC/ggml/src" -maxdepth 1 -type f -exec cp {} "$STAGE/trim/llama.cpp/ggml/src/" \;
cp -r "$SRC/ggml/src/ggml-cpu" "$SRC/ggml/src/ggml-cuda" "$STAGE/trim/llama.cpp/ggml/src/"
# tools/: only what the bundle builds
cat > "$STAGE/trim/llama.cpp/tools/CMakeLists.txt" <<'CMAKE'
# trimmed by tensorwise bench/gpu/make-bundle.sh: only llama-quantize and llama-bench
find_package(Threads REQUIRED)
llama_add_compile_flags()
add_subdirectory(llama-bench)
add_subdirectory(quantize)
CMAKE
echo "$COMMIT" > "$STAGE/trim/llama.cpp/COMMIT"
tar -C "$STAGE/trim" -cf - llama.cpp | xz -T0 -9 > "$BUNDLE/llama.cpp.tar.xz"

# 4. Build metadata for a cuda local build (copied from the CUDA prebuilt package when present, else written).
META="$ROOT/node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda/_nlcBuildMetadata.json"
if [ -f "$META" ]; then cp "$META" "$BUNDLE/nlc-build-metadata.json"; else
    RELEASE="$(node -p "require('$NLC/llama/llama.cpp.info.json').tag")"
    echo "{\"buildOptions\":{\"customCmakeOptions\":{},\"progressLogs\":true,\"platform\":\"linux\",\"platformInfo\":{\"name\":\"Ubuntu\",\"version\":\"22.04\"},\"arch\":\"x64\",\"gpu\":\"cuda\",\"llamaCpp\":{\"repo\":\"ggml-org/llama.cpp\",\"release\":\"$RELEASE\"}}}" > "$BUNDLE/nlc-build-metadata.json"
fi
cp "$ROOT/bench/gpu/run-on-gpu.sh" "$BUNDLE/run-on-gpu.sh"
# GNU patch (libc only), used by bench/gpu/device-call.sh when the device image has none.
mkdir -p "$BUNDLE/bin" && cp "$(command -v patch)" "$BUNDLE/bin/patch"

# 5. Manifest and the size check.
{
    echo "tensorwise GPU bundle, made $(date -u +%FT%TZ) from $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "node $(node -v), node-llama-cpp $(node -p "require('$NLC/package.json').version"), llama.cpp commit $COMMIT"
    (cd "$BUNDLE" && for f in node.xz app.tar.xz llama.cpp.tar.xz nlc-build-metadata.json run-on-gpu.sh; do
        printf '%10d  %s  %s\n' "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)" "$f"; done)
} > "$BUNDLE/MANIFEST.txt"
TOTAL=$(du -cb "$BUNDLE"/{node.xz,app.tar.xz,llama.cpp.tar.xz,nlc-build-metadata.json,run-on-gpu.sh,MANIFEST.txt} | tail -1 | cut -f1)
echo "total $TOTAL bytes" >> "$BUNDLE/MANIFEST.txt"
cat "$BUNDLE/MANIFEST.txt" >&2
if [ "$TOTAL" -gt "$LIMIT_BYTES" ]; then log "bundle is $TOTAL bytes, over the 64 MiB limit"; exit 1; fi
log "ok: $(( TOTAL / 1024 / 1024 )) MiB in $BUNDLE"
