#!/usr/bin/env bash
# Records this machine for the planner's recorded-machine tests (electron/engine/planner/testing/recordedBench.ts):
# a synthetic model, its tensor table (`tensorwise inspect --json`), one `tensorwise bench` over budgets × strategies
# with a fixed thread count, and the machine profiles that benchmark planned with (profiled fresh into a cache folder
# of its own, so the folder holds exactly those). A test then replays the planner on the recording, with no GPU.
#
#   bash bench/record-machine.sh <out-dir> [make-model flags] -- [tensorwise bench flags]
#
# e.g. this VM with Mesa's llvmpipe as its (slow) GPU, as bench/results/2026-11-27-vm-llvmpipe was recorded:
#   GGML_VK_VISIBLE_DEVICES=0 bash bench/record-machine.sh bench/results/2026-11-27-vm-llvmpipe \
#       --layers 8 --embd 512 --ff 1408 --heads 8 --kv-heads 2 --vocab 8192 --type q4_0 -- \
#       --gpu vulkan --budgets 25,50% --prompts 64,512 --gens 32 --strategies layers,fit,cpu,optimal --repeats 3 --threads 2
# Needs a built checkout (npm install). Run it on a quiet machine: nothing else timing or building.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:?usage: bash bench/record-machine.sh <out-dir> [make-model flags] -- [bench flags]}"
shift
model_flags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do model_flags+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
case " $* " in *" --threads "*) ;; *) echo "record-machine: pass --threads N to the bench (a replay needs one fixed thread count)" >&2; exit 2 ;; esac
[ -e "$out" ] && { echo "record-machine: $out exists; record into a new folder" >&2; exit 2; }
mkdir -p "$out/profiles"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tw() { node bin/tensorwise.mjs "$@"; }
{
    echo "recorded $(date -u +%Y-%m-%dT%H:%M:%SZ) at $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')"
    echo "command: bash bench/record-machine.sh $out ${model_flags[*]} -- $*"
    echo "GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES:-unset}"
    grep -m1 'model name' /proc/cpuinfo; echo "cores: $(nproc)"; grep MemTotal /proc/meminfo
    echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"
tw make-model "$work/model.gguf" "${model_flags[@]}" > /dev/null
tw inspect "$work/model.gguf" --json > "$out/model.json"
tw inspect "$work/model.gguf" > "$out/model.txt"
# a cache folder of its own: the profiles this benchmark measured and planned with, and nothing older
XDG_CACHE_HOME="$work/cache" tw bench "$work/model.gguf" --out "$out/bench" "$@" > "$out/bench.txt" 2> "$out/bench.log"
cp "$work/cache/tensorwise"/profile-*.json "$out/profiles/"
# a profile measured while other programs took the CPU is no record of this machine (cpuContention.ts)
node --input-type=module -e '
import fs from "node:fs";
import {isContended} from "./dist/electron/engine/profiler/cpuContention.js";
const dir = process.argv[1];
let busy = 0;
for (const name of fs.readdirSync(dir)) {
    const p = JSON.parse(fs.readFileSync(`${dir}/${name}`, "utf8"));
    const c = p.cpuContention;
    console.log(`${name}: ${p.threads} threads, other programs ${c == null ? "not measured" : `${c.otherCores.toFixed(2)} of ${c.cores} cores`}`);
    if (c != null && isContended(c)) busy++;
}
if (busy > 0) { console.error(`record-machine: ${busy} profile(s) measured on a busy machine; record again when it is idle`); process.exit(1); }
' "$out/profiles" | tee -a "$out/machine.txt"
rm -f "$out/bench/report.html.tmp"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
sed -i "s#$work/model.gguf#model.gguf#g" "$out"/bench/*.json "$out"/bench/*.csv "$out/bench.txt" "$out/bench.log" "$out/model.txt" 2>/dev/null || true
ls -la "$out" "$out/bench" "$out/profiles"
tail -20 "$out/bench.txt"
