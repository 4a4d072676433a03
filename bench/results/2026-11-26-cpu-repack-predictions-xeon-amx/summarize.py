"""Prints predicted vs measured TTFT/TPOT per model and thread count, before and after the profiler timed repacked CPU weights."""
import glob
import json
import os

here = os.path.dirname(os.path.abspath(__file__))


def rows(report_file):
    report = json.load(open(report_file))
    for run in report["runs"]:
        load = run["loads"][0]
        buffers = ",".join(b["bufferType"] for b in load["memory"]["bufferTypes"] if b["weightsBytes"] > 0)
        for point in run["points"]:
            yield load["plan"]["threads"], buffers, point


print("| run | model | threads | weights in | point | measured ms | predicted ms | error |")
print("|---|---|---|---|---|---:|---:|---:|")
for label, pattern in [("before", "before/report-*.json"), ("after", "after/*/report.json")]:
    for report_file in sorted(glob.glob(os.path.join(here, pattern))):
        model = json.load(open(report_file))["model"]["path"].split("/")[-1]
        for threads, buffers, p in rows(report_file):
            error = 100 * (p["predictedMs"] - p["medianMs"]) / p["medianMs"]
            name = f"{p['kind']} {p['tokens']}"
            print(f"| {label} | {model} | {threads} | {buffers} | {name} | {p['medianMs']:.2f} | {p['predictedMs']:.2f} | {error:+.1f}% |")
