#!/bin/bash
# one profile cache; runs alternate between --no-refresh (the cached profile as it is) and the default (CPU decode points re-timed)
cd /work/main
export XDG_CACHE_HOME=/tmp/exp/cache-ab
mkdir -p $XDG_CACHE_HOME
for i in $(seq 1 ${N:-5}); do
  for mode in stale fresh; do
    flag=""; [ $mode = stale ] && flag="--no-refresh"
    out=/tmp/exp/ab-$i-$mode
    node bin/tensorwise.mjs bench /tmp/tensorwise-parity-large.gguf --gpu cpu --strategies cpu --budgets 50% \
      --prompts 16 --gens 32 --repeats 3 --threads 2 --json $flag --out $out > $out.log 2>&1
    python3 - $out $mode $i <<'PY'
import json,sys
out,mode,i=sys.argv[1:]
r=json.load(open(out+'/report.json'))
run=r['runs'][0]
pt=[p for p in run['points'] if p['kind']=='tpot'][0]
note=[n for n in run['loads'][0]['plan']['notes'] if 're-timed' in n]
print(i, mode, 'pred %.1f median %.1f err %+.1f%%'%(pt['predictedMs'],pt['medianMs'],(pt['predictedMs']-pt['medianMs'])/pt['medianMs']*100), [round(x,1) for x in pt['samplesMs']], note[0][:160] if note else '', flush=True)
PY
  done
done
