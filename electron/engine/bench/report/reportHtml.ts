/**
 * report.html: a self-contained page (inline CSS and SVG, no scripts or network) with the charts of the paper "OATO:
 * operator-aware tensor offloading" (Fig. 8–10: TTFT vs prompt length, TPOT vs generation length, speed vs budget), the
 * speed-up tables against `layers`, `fit` and the best hand-tuned baseline, predicted-vs-measured error, and every
 * run's plan and memory. Strategy names and colours are the app's (electron/contract/strategyStyles.ts).
 */
import type {BenchReport, BenchRun, PointKind} from "../../../contract/bench.js";
import {escapeHtml, formatNumber, lineChartSvg, type ChartSeries} from "./svgChart.js";
import {busyMachineNote, predictionErrors, rangeCoverage, speedups, stockRatios, targetChecks, variantOrder} from "./summariseReport.js";
import type {BaselineName} from "../../../contract/bench.js";
import {REPORT_CSS} from "./reportCss.js";
import {strategyStyle} from "../../../contract/strategyStyles.js";

const MiB = 1024 * 1024;

const colorOf = (label: string) => strategyStyle(label).color;

/** "1 repeat", "3 repeats". */
function count(n: number, noun: string): string {
    return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function mib(bytes: number | null | undefined): string {
    return bytes == null ? "–" : (bytes / MiB).toFixed(bytes < 10 * MiB ? 2 : 0);
}

/** Numeric x for a budget: the percentage when given as `N%`, else GiB. */
function budgetX(report: BenchReport, run: BenchRun): number {
    const percent = /^([\d.]+)%$/.exec(run.budget);
    return report.settings.budgets.every((b) => b.endsWith("%")) && percent?.[1] != null ? Number(percent[1]) : run.budgetBytes / 2 ** 30;
}

function seriesFor(report: BenchReport, runs: readonly BenchRun[], kind: PointKind, value: (ms: number, tokens: number) => number): ChartSeries[] {
    return variantOrder(report).map((label) => ({
        name: label, color: colorOf(label), dashed: strategyStyle(label).dashed,
        points: runs.filter((r) => r.variant.label === label && r.status === "ok")
            .flatMap((r) => r.points.filter((p) => p.kind === kind).map((p) => ({x: p.tokens, y: value(p.medianMs, p.tokens)})))
    })).filter((s) => s.points.length > 0);
}

function figures(report: BenchReport): string {
    const parts: string[] = [];
    const budgets = report.settings.budgets;
    const ticks = (values: readonly number[]) => values.map((value) => ({value, label: String(value)}));
    parts.push(`<h2>Time to first token vs prompt length <small>(lower is better; both axes logarithmic)</small></h2><div class="charts">`);
    for (const budget of budgets)
        parts.push(lineChartSvg(seriesFor(report, report.runs.filter((r) => r.budget === budget), "ttft", (ms) => ms),
            {title: `TTFT, budget ${budget}`, xLabel: "prompt tokens", yLabel: "TTFT (ms, log)", logX: true, logY: true, xTicks: ticks(report.settings.prompts)}));
    parts.push(`</div><h2>Time per output token vs generation length <small>(lower is better)</small></h2><div class="charts">`);
    for (const budget of budgets)
        parts.push(lineChartSvg(seriesFor(report, report.runs.filter((r) => r.budget === budget), "tpot", (ms) => ms),
            {title: `TPOT, budget ${budget}`, xLabel: "generated tokens", yLabel: "TPOT (ms)", logX: true, xTicks: ticks(report.settings.gens)}));
    parts.push(`</div><h2>Speed vs GPU budget <small>(tokens per second; higher is better)</small></h2><div class="charts">`);
    const byBudget = (kind: PointKind, tokens: number, title: string, yLabel: string) => {
        const xs = [...new Set(report.runs.map((r) => budgetX(report, r)))].sort((a, b) => a - b);
        const percent = report.settings.budgets.every((b) => b.endsWith("%"));
        const series: ChartSeries[] = variantOrder(report).map((label) => ({
            name: label, color: colorOf(label), dashed: strategyStyle(label).dashed,
            points: report.runs.filter((r) => r.variant.label === label && r.status === "ok").flatMap((r) => {
                const p = r.points.find((q) => q.kind === kind && q.tokens === tokens);
                return p == null ? [] : [{x: budgetX(report, r), y: p.tokensPerSec}];
            })
        })).filter((s) => s.points.length > 0);
        return lineChartSvg(series, {title, xLabel: percent ? "VRAM budget (% of weights)" : "VRAM budget (GiB)", yLabel,
            xTicks: xs.map((value) => ({value, label: percent ? `${value}%` : value.toFixed(2)}))});
    };
    const prompts = report.settings.prompts;
    const shortPrompt = prompts.includes(64) ? 64 : prompts[0];
    const longPrompt = prompts.at(-1);
    const gen = report.settings.gens.at(-1);
    if (shortPrompt != null) parts.push(byBudget("ttft", shortPrompt, `Prefill speed, ${shortPrompt}-token prompt`, "prompt tokens/s"));
    if (longPrompt != null && longPrompt !== shortPrompt) parts.push(byBudget("ttft", longPrompt, `Prefill speed, ${longPrompt}-token prompt`, "prompt tokens/s"));
    if (gen != null) parts.push(byBudget("tpot", gen, `Decode speed, ${gen} generated tokens`, "generated tokens/s"));
    parts.push("</div>");
    return parts.join("");
}

function speedupTables(report: BenchReport): string {
    // the MoE baselines only have runs for a mixture-of-experts model (runBench skips them otherwise)
    const cells = [...speedups(report), ...speedups(report, ["cpu-moe", "n-cpu-moe"])];
    const points = [...report.settings.prompts.map((t) => ({kind: "ttft" as const, tokens: t})), ...report.settings.gens.map((t) => ({kind: "tpot" as const, tokens: t}))];
    const baselines: {name: BaselineName; title: string}[] = [
        {name: "layers", title: "vs layers (llama.cpp default layer split)"},
        {name: "fit", title: "vs fit (llama.cpp --fit)"},
        {name: "best-tuned", title: "vs the best of layers / fit tuned by hand (pinned memory, best micro-batch)"},
        {name: "cpu-moe", title: "vs cpu-moe (llama.cpp --cpu-moe: every expert weight in host memory)"},
        {name: "n-cpu-moe", title: "vs n-cpu-moe (llama.cpp --n-cpu-moe N, the best N that fits)"}
    ];
    const parts = [`<h2>Speed-ups <small>(baseline time ÷ variant time; &gt; 1 is faster)</small></h2>`];
    for (const {name, title} of baselines) {
        const mine = cells.filter((c) => c.baseline === name);
        if (mine.length === 0) continue;
        parts.push(`<h3>${escapeHtml(title)}</h3><div class="scroll"><table class="speedups"><thead><tr><th>budget</th><th>variant</th>`,
            ...points.map((p) => `<th>${p.kind === "ttft" ? "TTFT" : "TPOT"}<br><span>${p.kind === "ttft" ? "pp" : "tg"}${p.tokens}</span></th>`),
            "</tr></thead><tbody>");
        for (const budget of report.settings.budgets)
            for (const variant of variantOrder(report)) {
                const row = points.map((p) => mine.find((c) => c.budget === budget && c.variant === variant && c.kind === p.kind && c.tokens === p.tokens));
                if (row.every((c) => c == null)) continue;
                parts.push(`<tr><td>${escapeHtml(budget)}</td><td><span class="dot" style="background:${colorOf(variant)}"></span>${escapeHtml(variant)}</td>`,
                    ...row.map((c) => {
                        if (c == null) return "<td class=\"na\">–</td>";
                        const cls = c.speedup >= 1.05 ? "win" : c.speedup <= 0.95 ? "loss" : "tie";
                        return `<td class="${cls}" title="${formatNumber(c.variantMs)} ms vs ${formatNumber(c.baselineMs)} ms">${c.speedup.toFixed(2)}×</td>`;
                    }), "</tr>");
            }
        parts.push("</tbody></table></div>");
    }
    return parts.join("");
}

/** Our tokens/s ÷ stock llama-bench's on the same flags, per cell (only when the benchmark ran it). */
function stockTable(report: BenchReport): string {
    const cells = stockRatios(report);
    if (cells.length === 0) return "";
    const points = [...report.settings.prompts.map((t) => ({kind: "ttft" as const, tokens: t})), ...report.settings.gens.map((t) => ({kind: "tpot" as const, tokens: t}))];
    const commit = report.runs.flatMap((r) => r.loads).find((l) => l.llamaBench != null)?.llamaBench?.commit ?? "?";
    const parts = [`<h2>vs stock llama.cpp <small>(tensorwise tokens/s ÷ llama-bench tokens/s, each side at its median sample, same flags, llama.cpp ${escapeHtml(commit.slice(0, 12))}; ` +
        `1.00 = parity)</small></h2><div class="scroll"><table class="speedups"><thead><tr><th>budget</th><th>variant</th>`,
    ...points.map((p) => `<th>${p.kind === "ttft" ? "pp" : "tg"}${p.tokens}</th>`), "</tr></thead><tbody>"];
    for (const budget of report.settings.budgets)
        for (const variant of variantOrder(report)) {
            const row = points.map((p) => cells.find((c) => c.budget === budget && c.variant === variant && c.kind === p.kind && c.tokens === p.tokens));
            if (row.every((c) => c == null)) continue;
            parts.push(`<tr><td>${escapeHtml(budget)}</td><td><span class="dot" style="background:${colorOf(variant)}"></span>${escapeHtml(variant)}</td>`, ...row.map((c) => c == null ? "<td class=\"na\">–</td>"
                : `<td class="${c.ratio >= 0.97 ? "win" : c.ratio >= 0.9 ? "tie" : "loss"}" title="${formatNumber(c.tokensPerSec)} vs ${formatNumber(c.stockTokensPerSec)} t/s">${c.ratio.toFixed(2)}×</td>`), "</tr>");
        }
    parts.push("</tbody></table></div>");
    return parts.join("");
}

/** The targets the tensorwise planner (`optimal`) is held to, each with what it means for a user. */
function targetTable(report: BenchReport): string {
    const checks = targetChecks(report);
    if (checks.every((c) => c.ttftShortVsLayers == null && c.worstVsBestTuned == null && c.tpotOverFloor == null)) return "";
    const cell = (value: number | null, pass: (v: number) => boolean, unit = "×") => value == null ? "<td class=\"na\">–</td>"
        : `<td class="${pass(value) ? "win" : "loss"}">${value.toFixed(2)}${unit}</td>`;
    const first = checks[0];
    const short = first?.shortPrompt ?? "?";
    const long = first?.longPrompt ?? "?";
    const targets = [
        `<b>First token vs layers</b>: how many times sooner the first token of a ${short}-token prompt arrives than with llama.cpp's layer split; the aim is at least 4×.`,
        "<b>Decode vs layers</b>: how many times faster tokens are generated than with the layer split (median over the generation lengths); the aim is at least 1.1×.",
        "<b>Worst vs hand-tuned</b>: the slowest of all measurements against the better hand-tuned baseline (layer split or --fit with pinned memory and the best micro-batch); at least 1× means never slower.",
        `<b>First token vs hand-tuned</b>: the same for a ${long}-token prompt; the aim is at least 1.3×.`,
        "<b>Decode ÷ floor</b>: time per token over the least it can be, the bytes of weights in system RAM read once at the CPU's measured bandwidth; the aim is at most 1.5."
    ];
    return `<h2>Targets for the tensorwise planner (optimal) <small>(green = met, red = missed)</small></h2>` +
        `<ul class="targets">${targets.map((t) => `<li>${t}</li>`).join("")}</ul><table><thead><tr><th>budget</th>` +
        `<th>First token vs layers<br><span>${short}-token prompt, ≥ 4×</span></th><th>Decode vs layers<br><span>median, ≥ 1.1×</span></th>` +
        `<th>Worst vs hand-tuned<br><span>≥ 1×</span></th><th>First token vs hand-tuned<br><span>${long}-token prompt, ≥ 1.3×</span></th>` +
        `<th>Decode ÷ floor<br><span>median, ≤ 1.5</span></th></tr></thead><tbody>` +
        checks.map((c) => `<tr><td>${escapeHtml(c.budget)}</td>${cell(c.ttftShortVsLayers, (v) => v >= 4)}${cell(c.tpotVsLayers, (v) => v >= 1.1)}` +
            `${cell(c.worstVsBestTuned, (v) => v >= 1)}${cell(c.ttftLongVsBestTuned, (v) => v >= 1.3)}${cell(c.tpotOverFloor, (v) => v <= 1.5, "")}</tr>`).join("") +
        "</tbody></table>";
}

/** What each strategy in the report is, in the app's words and colours. */
function strategyLegend(report: BenchReport): string {
    const rows = variantOrder(report).map((label) => {
        const style = strategyStyle(label);
        return `<tr><td><span class="dot" style="background:${style.color}"></span>${escapeHtml(style.name)}</td><td>${escapeHtml(style.title)}</td>` +
            `<td>${escapeHtml(style.description)}</td></tr>`;
    });
    return `<h2>Strategies</h2><table class="strategies"><thead><tr><th>name</th><th>what</th><th>how it places the weights</th></tr></thead>` +
        `<tbody>${rows.join("")}</tbody></table>`;
}

function errorTable(report: BenchReport): string {
    const errors = predictionErrors(report);
    const pct = (v: number | null) => v == null ? "–" : `${v.toFixed(1)}%`;
    const cls = (v: number | null) => v == null ? "na" : v <= 5 ? "win" : v <= 20 ? "tie" : "loss";
    return `<h2>Predicted vs measured <small>(median absolute % error over every budget and point)</small></h2>` +
        `<table><thead><tr><th>variant</th><th>TTFT</th><th>TPOT</th><th>all</th><th>points</th></tr></thead><tbody>` +
        errors.map((e) => `<tr><td>${escapeHtml(e.variant)}</td><td class="${cls(e.ttft)}">${pct(e.ttft)}</td><td class="${cls(e.tpot)}">${pct(e.tpot)}</td>` +
            `<td class="${cls(e.all)}">${pct(e.all)}</td><td>${e.points}</td></tr>`).join("") + "</tbody></table>" + rangeTable(report);
}

/** How often the measurement fell within the range predicted for it (ranges from this machine's earlier errors). */
function rangeTable(report: BenchReport): string {
    const coverage = rangeCoverage(report);
    if (coverage.length === 0) return "";
    return `<h2>Within the predicted range <small>(measured median inside the range predicted from this machine's earlier prediction errors)</small></h2>` +
        `<table><thead><tr><th>variant</th><th>cells within</th><th>share</th></tr></thead><tbody>` +
        coverage.map((c) => `<tr><td>${escapeHtml(c.variant)}</td><td>${c.held} of ${c.cells}</td>` +
            `<td class="${c.held / c.cells >= 0.8 ? "win" : "loss"}">${(100 * c.held / c.cells).toFixed(0)}%</td></tr>`).join("") + "</tbody></table>";
}

function runsTable(report: BenchReport): string {
    const rows = report.runs.map((run) => {
        const loads = run.loads.map((load) => {
            const m = load.memory;
            const memory = m == null ? "–" : m.bufferTypes.filter((b) => b.weightsBytes + b.kvCacheBytes + b.scratchBytes > 0)
                .map((b) => `${escapeHtml(b.bufferType)}: W ${mib(b.weightsBytes)} / KV ${mib(b.kvCacheBytes)} / S ${mib(b.scratchBytes)}`).join("<br>");
            return `<div class="load"><b>-ngl ${load.plan.gpuLayers}</b>, ${load.plan.overrides.length} overrides, ubatch ${load.plan.batchSize}, ` +
                `${load.plan.useMmap ? "mmap" : "pinned (no mmap)"}, load ${(load.loadMs / 1000).toFixed(1)} s<div class="mem">${memory}</div>` +
                `<details><summary>reproduce</summary><code>${escapeHtml(load.reproduce.bench)}</code><code>${escapeHtml(load.reproduce.cli)}</code></details></div>`;
        }).join("");
        const busy = busyMachineNote(run);
        const status = (run.status === "ok" ? "ok" : `${run.status}: ${escapeHtml(run.error ?? "")}`) +
            (busy != null ? `<br><span class="loss">${escapeHtml(busy)}</span>` : "");
        return `<tr><td>${escapeHtml(run.budget)}<br><span class="muted">${mib(run.budgetBytes)} MiB</span></td><td>${escapeHtml(run.variant.label)}</td>` +
            `<td class="${run.status === "ok" ? "" : "loss"}">${status}</td><td>${loads || "–"}</td>` +
            `<td>${run.tpotFloorMs == null ? "–" : run.tpotFloorMs.toFixed(2) + " ms"}</td></tr>`;
    });
    return `<h2>Runs <small>(plan, measured memory per buffer type in MiB: weights / KV cache / scratch, and how to reproduce)</small></h2>` +
        `<div class="scroll"><table class="runs"><thead><tr><th>budget</th><th>variant</th><th>status</th><th>loads</th><th>TPOT floor</th></tr></thead>` +
        `<tbody>${rows.join("")}</tbody></table></div>`;
}

function header(report: BenchReport): string {
    const {environment: env, model, settings} = report;
    const done = report.runs.length;
    const state = report.interrupted ? `<span class="badge loss">interrupted after ${done} of ${report.plannedRuns} runs</span>`
        : report.finishedAt == null ? `<span class="badge tie">in progress: ${done} of ${report.plannedRuns} runs</span>`
            : `<span class="badge win">complete: ${done} runs</span>`;
    const gpu = env.gpu == null ? "no GPU" : `${escapeHtml(env.gpu.name)}${env.gpu.driver ? `, driver ${escapeHtml(env.gpu.driver)}` : ""}${env.gpu.memoryTotal ? `, ${escapeHtml(env.gpu.memoryTotal)}` : ""}`;
    const quant = model.quantMix.map((q) => `${escapeHtml(q.type)} ${mib(q.bytes)} MiB`).join(", ");
    return `<header><h1>tensorwise benchmark ${state}</h1>` +
        `<dl><dt>model</dt><dd>${escapeHtml(model.path)} — ${model.fileType ?? "?"}, ${mib(model.weightBytes)} MiB of weights, ${model.layerCount ?? "?"} layers (${quant})</dd>` +
        `<dt>machine</dt><dd>${escapeHtml(env.cpu.model)} (${env.cpu.threads} threads), ${(env.ramBytes / 2 ** 30).toFixed(0)} GiB RAM; ${gpu}; backend ${escapeHtml(env.backend)}</dd>` +
        `<dt>software</dt><dd>llama.cpp ${escapeHtml(env.llamaCppRelease)}, node-llama-cpp ${escapeHtml(env.nodeLlamaCppVersion)}, Node ${escapeHtml(env.nodeVersion)}, tensorwise ${escapeHtml(env.tensorwiseVersion)}</dd>` +
        `<dt>settings</dt><dd>budgets ${settings.budgets.join(", ")}; prompts ${settings.prompts.join(", ")}; generations ${settings.gens.join(", ")}; ` +
        `${count(settings.repeats, "repeat")} per point; ${settings.threads} threads; context ${settings.contextSize}; micro-batch ${settings.batchSize} ` +
        `(hand-tuned tries ${settings.tunedBatchSizes.join(", ")}); started ${escapeHtml(report.startedAt)}</dd></dl></header>`;
}

/** Renders the whole report as one HTML document with no external references. */
export function reportHtml(report: BenchReport): string {
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>tensorwise benchmark — ${escapeHtml(report.model.path.split("/").at(-1) ?? "")}</title><style>${REPORT_CSS}</style></head><body><main>` +
        header(report) + strategyLegend(report) + targetTable(report) + figures(report) + stockTable(report) + speedupTables(report) + errorTable(report) + runsTable(report) +
        `<footer>Generated by <code>tensorwise bench</code>. ${report.settings.repeats === 1 ? "One measurement per point (1 repeat)" : `Medians over ${count(report.settings.repeats, "repeat")}`}; TTFT = prompt processing + first token; ` +
        `TPOT = mean decode step after the first token. The full data is in report.json / report.csv.</footer></main></body></html>\n`;
}
