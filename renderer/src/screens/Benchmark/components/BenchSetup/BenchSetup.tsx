import type {BenchStrategy} from "../../../../../../electron/contract/ipc";
import {startBench, stopBench, toggleStrategy} from "../../../../actions/benchActions";
import {useBenchStore} from "../../../../stores/benchStore";
import {MOE_STRATEGY_NAMES, STRATEGY_NAMES} from "../../../../../../electron/contract/strategies";
import {strategyStyle} from "../../../../../../electron/contract/strategyStyles";
import "./BenchSetup.css";

/**
 * The strategies a user picks from (the mixture-of-experts ones only mean something for such a model), named and
 * coloured as everywhere else (electron/contract/strategyStyles.ts).
 */
const STRATEGIES: readonly BenchStrategy[] = STRATEGY_NAMES.filter((name) => !MOE_STRATEGY_NAMES.includes(name));

/** The grid of a benchmark (budgets × strategies, prompt and generation lengths, repeats) and Start / Stop. */
export function BenchSetup({canStart, reason}: {canStart: boolean; reason: string | null}) {
    const form = useBenchStore((state) => state.form);
    const setForm = useBenchStore((state) => state.setForm);
    const run = useBenchStore((state) => state.run);
    const running = run.status === "running";
    const text = (key: "budgets" | "prompts" | "gens", label: string, hint: string, testId: string) => (
        <label className="control">
            <span className="control-label">{label}</span>
            <input className="input bench-list-input" data-testid={testId} value={form[key]} spellCheck={false}
                onChange={(event) => setForm({[key]: event.target.value})}/>
            <span className="control-hint faint">{hint}</span>
        </label>
    );
    return (
        <section className="panel bench-setup" data-testid="bench-setup">
            <fieldset className="bench-form" disabled={running}>
                {text("budgets", "GPU budgets %", "share of the weights", "bench-budgets")}
                {text("prompts", "Prompt lengths", "tokens, for TTFT", "bench-prompts")}
                {text("gens", "Generation lengths", "tokens, for TPOT", "bench-gens")}
                <label className="control">
                    <span className="control-label">Repeats</span>
                    <input className="input bench-repeats" type="number" min={1} max={20} data-testid="bench-repeats" value={form.repeats}
                        onChange={(event) => setForm({repeats: Math.min(20, Math.max(1, Math.round(Number(event.target.value) || 1)))})}/>
                    <span className="control-hint faint">median of N</span>
                </label>
                <div className="control bench-strategies">
                    <span className="control-label">Strategies</span>
                    <div className="bench-chips" role="group">
                        {STRATEGIES.map((strategy) => {
                            const on = form.strategies.includes(strategy);
                            const style = strategyStyle(strategy);
                            return (
                                <button key={strategy} type="button" className={`bench-chip ${on ? "on" : ""}`} aria-pressed={on}
                                    title={`${style.title}: ${style.description}`} data-testid={`bench-strategy-${strategy}`} onClick={() => toggleStrategy(strategy)}>
                                    <span className="swatch" style={{background: style.color}}/>{style.name}
                                </button>
                            );
                        })}
                    </div>
                    <label className="bench-toggle">
                        <input type="checkbox" checked={form.handTuned} data-testid="bench-hand-tuned"
                            onChange={(event) => setForm({handTuned: event.target.checked})}/>
                        <span>Hand-tuned baselines <span className="faint">(layers / fit with pinned memory and the best micro-batch)</span></span>
                    </label>
                </div>
            </fieldset>
            <div className="bench-actions">
                {running
                    ? <button className="button danger large" data-testid="bench-stop" disabled={run.stopping} onClick={() => void stopBench()}>
                        {run.stopping ? "Stopping after this measurement…" : "■ Stop"}
                    </button>
                    : <button className="button primary large" data-testid="bench-start" disabled={!canStart} onClick={() => void startBench()}>
                        ▶ Run benchmark
                    </button>}
                <span className="faint bench-note">{reason ?? "Chat pauses while it runs: each strategy loads the model its own way. Your model is loaded again afterwards."}</span>
            </div>
        </section>
    );
}
