import {useMemo} from "react";
import {formatMs, formatRate, tokensPerSecond} from "../../format/format";
import {useChatStore} from "../../stores/chatStore";
import {LiveChart} from "./components/LiveChart/LiveChart";
import "./Dashboards.css";

/** TTFT, TPOT and tokens/s per reply of the open conversation, from engine timing, updating as replies finish. */
export function Dashboards() {
    const activeId = useChatStore((state) => state.activeId);
    const conversation = useChatStore((state) => activeId == null ? null : state.conversations[activeId] ?? null);
    const stream = useChatStore((state) => Object.values(state.streams).find((candidate) => candidate.conversationId === activeId) ?? null);
    const title = useChatStore((state) => state.summaries.find((summary) => summary.id === activeId)?.title ?? conversation?.title);

    const replies = useMemo(() => (conversation?.messages ?? []).filter((message) => message.role === "assistant" && message.timing != null), [conversation]);
    const data = useMemo(() => {
        const x = replies.map((_, index) => index + 1);
        // each reply's own prediction (its prompt and reply lengths, priced by the engine); null for unplanned loads
        const predicted = replies.map((message) => message.timing!.predicted ?? null);
        const anyPredicted = predicted.some((prediction) => prediction != null);
        return {
            x,
            ttft: [
                {label: "TTFT", color: "#6ea8fe", values: replies.map((message) => message.timing!.ttftMs)},
                ...(anyPredicted ? [{label: "predicted", color: "#5f687c", values: predicted.map((prediction) => prediction?.ttftMs ?? null)}] : [])
            ],
            tpot: [
                {label: "TPOT", color: "#2dd4bf", values: replies.map((message) => message.timing!.tpotMs)},
                ...(anyPredicted ? [{label: "predicted", color: "#5f687c", values: predicted.map((prediction) => prediction?.tpotMs ?? null)}] : [])
            ],
            rate: [{label: "tok/s", color: "#f472b6", values: replies.map((message) => tokensPerSecond(message.timing!.tpotMs))}]
        };
    }, [replies]);

    const last = replies.at(-1)?.timing;
    const mean = (values: (number | null)[]) => {
        const present = values.filter((value): value is number => value != null);
        return present.length === 0 ? null : present.reduce((sum, value) => sum + value, 0) / present.length;
    };
    return (
        <div className="screen dashboards-screen">
            <div className="screen-header">
                <div>
                    <h1>Dashboards</h1>
                    <p>{conversation != null ? <>Per reply in <b>{title}</b>, timed by the engine; "predicted" is the plan's cost model for each reply's own prompt and length.</> : "Open a conversation in Chat to see its timing."}</p>
                </div>
                {stream != null && <span className="pill" data-testid="live-stream"><span className="dot live"/>replying · {stream.tokens} tokens · {formatMs(stream.elapsedMs)}</span>}
            </div>
            <div className="stack">
                <section className="panel dashboards-stats">
                    <div className="stat"><span className="label">Replies</span><span className="value" data-testid="reply-count">{replies.length}</span></div>
                    <div className="stat"><span className="label">Last TTFT</span><span className="value">{formatMs(last?.ttftMs)}</span></div>
                    <div className="stat"><span className="label">Last TPOT</span><span className="value">{formatMs(last?.tpotMs)}</span></div>
                    {last?.predicted != null && (
                        <div className="stat" title={`the plan's cost model for this reply's own ${last.promptTokens}-token prompt and ${last.generatedTokens} tokens`}>
                            <span className="label">Predicted for it</span>
                            <span className="value" data-testid="last-predicted" data-prompt-tokens={last.promptTokens} data-ttft={last.predicted.ttftMs}>
                                {formatMs(last.predicted.ttftMs)} · {formatMs(last.predicted.tpotMs)}
                            </span>
                        </div>
                    )}
                    <div className="stat"><span className="label">Mean TTFT</span><span className="value">{formatMs(mean(data.ttft[0]!.values))}</span></div>
                    <div className="stat"><span className="label">Mean TPOT</span><span className="value">{formatMs(mean(data.tpot[0]!.values))}</span></div>
                    <div className="stat"><span className="label">Mean speed</span><span className="value">{formatRate(mean(data.rate[0]!.values))}</span></div>
                </section>
                <div className="grid-2">
                    <LiveChart testId="chart-ttft" title="Time to first token" quantity="TTFT" unit="ms" x={data.x} series={data.ttft}/>
                    <LiveChart testId="chart-tpot" title="Time per output token" quantity="TPOT" unit="ms" x={data.x} series={data.tpot}/>
                </div>
                <LiveChart testId="chart-rate" title="Decode speed" quantity="speed" unit="tok/s" x={data.x} series={data.rate}/>
            </div>
        </div>
    );
}
