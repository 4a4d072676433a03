#!/bin/bash
# alternate: fresh profile + bench (cpu strategy, 2 threads) on the large model; records predicted vs measured TPOT
cd /work/main
for i in $(seq 1 ${N:-5}); do
  c=$(mktemp -d)
  XDG_CACHE_HOME=$c node bin/tensorwise.mjs bench /tmp/tensorwise-parity-large.gguf --gpu cpu --strategies cpu --budgets 50% \
    --prompts 16 --gens 32 --repeats 3 --threads ${T:-2} --json --out /tmp/exp/run-$i > /tmp/exp/run-$i.log 2>&1
  cp $c/tensorwise/profile-*.json /tmp/exp/run-$i/ 2>/dev/null
  rm -rf $c
  python3 - $i <<'PY'
import json,sys,glob
i=sys.argv[1]
r=json.load(open(f'/tmp/exp/run-{i}/report.json'))
p=json.load(open(glob.glob(f'/tmp/exp/run-{i}/profile-*.json')[0]))
op={(m['rows'],m['cols']):round(m['medianUs']) for m in p['matmuls'] if m['batch']==1}
for pt in r['runs'][0]['points']:
    if pt['kind']=='tpot': print(i, 'tpot pred %.1f meas'%pt['predictedMs'], [round(x,1) for x in pt['samplesMs']], 'ops',op, 'read %.1f'%(p['cpuReadBytesPerSec']/1e9), 'ovh %d/%d'%(p.get('decodeOverheadUs',0),p.get('decodePerLayerUs',0)), flush=True)
PY
done
