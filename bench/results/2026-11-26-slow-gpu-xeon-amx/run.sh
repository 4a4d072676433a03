#!/usr/bin/env bash
# The issue-24 headline: with Mesa's llvmpipe visible as a (slow) Vulkan GPU, `chat --auto` against hiding the GPU
# (`--gpu cpu`) on the `small` preset and a ≈380-token prompt, interleaved; and once, the old plan's configuration
# (`--gpu-layers 0` with llama.cpp's default op offload: every prompt op copied to llvmpipe).
# Usage: bash run.sh [repeats] > samples.jsonl   (from the project root; the profile cache is warmed first)
set -euo pipefail
repeats=${1:-5}
model=${MODEL:-/tmp/tw/small.gguf}
[ -f "$model" ] || node bin/tensorwise.mjs make-model "$model" --preset small > /dev/null
prompt=$(python3 -c "
import random; random.seed(1)
words='the quick brown fox jumps over lazy dog and runs into forest where many trees grow tall'.split()
print(' '.join(random.choice(words) for _ in range(190)))")
export GGML_VK_VISIBLE_DEVICES=0
run() { # arm, then chat flags
    local arm=$1; shift
    node bin/tensorwise.mjs chat "$model" --prompt "$prompt" --max-tokens 16 --json "$@" 2>/dev/null |
        python3 -c "import json,sys; d=json.load(sys.stdin); t=d['timing']; s=d.get('settings',{}); print(json.dumps({'arm': '$arm', 'ttftMs': t['ttftMs'], 'tpotMs': t['tpotMs'], 'promptTokens': t['promptTokens'], 'flags': d['placement']['llamaCppFlags'], 'useGpu': s.get('useGpu'), 'opOffload': s.get('opOffload')}))"
}
run warmup --auto > /dev/null   # profile (cached) and page cache
for i in $(seq 1 "$repeats"); do
    run auto --auto
    run gpu-cpu --gpu cpu
done
run old-ngl0-op-offload --gpu-layers 0
