import re
import sys, json, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'(\w+) (\d+) (\[[^\]]*\])', line)
    if not m: continue
    parts = [m.group(1), m.group(2)]
    samples = json.loads(m.group(3))
    if samples: rows[parts[0]].append(samples)
base = sys.argv[2] if len(sys.argv) > 2 else 'A'
for k, v in sorted(rows.items()):
    mins = [min(s) for s in v]; meds = [statistics.median(s) for s in v]
    print(f"{k}: n={len(v)} median-of-mins {statistics.median(mins):.0f}  best {min(mins)}  median-of-medians {statistics.median(meds):.0f}")
# paired ratios per round vs base (min of each)
for k in sorted(rows):
    if k == base: continue
    r = [min(b)/min(a) for a, b in zip(rows[base], rows[k])]
    print(f"{k}/{base} per-round min ratios: median {statistics.median(r):.3f}  range {min(r):.3f}-{max(r):.3f}")
