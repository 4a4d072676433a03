import type {EngineState} from "../../../../electron/contract/ipc";
import {useChatStore} from "../../stores/chatStore";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useServerStore} from "../../stores/serverStore";
import {useUiStore, type Screen, type ThemeChoice} from "../../stores/uiStore";
import {Icon} from "../Icon/Icon";
import {describeActivity} from "./describeActivity";
import {predictedPromptTokensPerSecond} from "../../format/promptTimeLeft";
import {useNow} from "../../hooks/useNow";
import "./Sidebar.css";

const items: {screen: Screen; label: string}[] = [
    {screen: "chat", label: "Chat"},
    {screen: "get-model", label: "Get a model"},
    {screen: "model", label: "Model"},
    {screen: "offload", label: "Auto-offload"},
    {screen: "memory", label: "Memory"},
    {screen: "dashboards", label: "Dashboards"},
    {screen: "benchmark", label: "Benchmark"},
    {screen: "server", label: "Server"},
    {screen: "tools", label: "Tools"}
];

function describeState(engine: EngineState): {label: string; tone: string} {
    switch (engine.state) {
        case "starting": return {label: "Engine starting", tone: "warn"};
        case "idle": return {label: "No model loaded", tone: "idle"};
        case "busy": return {label: `Busy: ${engine.task}`, tone: "warn"};
        case "ready": return {label: "Model ready", tone: "ok"};
        case "crashed": return {label: "Engine stopped", tone: "danger"};
    }
}

export function Sidebar() {
    const screen = useUiStore((state) => state.screen);
    const show = useUiStore((state) => state.show);
    const engine = useEngineStore((state) => state.engine);
    const machine = useEngineStore((state) => state.machine);
    const loaded = usePlanStore((state) => state.loaded);
    const status = describeState(engine);
    const streams = useChatStore((state) => state.streams);
    const server = useServerStore((state) => state.server);
    const waiting = Object.values(streams).some((stream) => stream.tokens === 0 && stream.text === "" && !stream.stopping);
    const now = useNow(waiting);
    const activity = describeActivity(Object.values(streams), server,
        {now, predictedTokensPerSecond: predictedPromptTokensPerSecond(loaded?.prediction)});
    const theme = useUiStore((state) => state.theme);
    const setTheme = useUiStore((state) => state.setTheme);
    return (
        <nav className="sidebar">
            <div className="sidebar-brand">
                <span className="sidebar-logo">tw</span>
                <div>
                    <div className="sidebar-name">tensorwise</div>
                    <div className="sidebar-tagline">every tensor, placed</div>
                </div>
            </div>
            <ul className="sidebar-nav">
                {items.map((item) => (
                    <li key={item.screen}>
                        <button className={`sidebar-item ${screen === item.screen ? "active" : ""}`} data-testid={`nav-${item.screen}`}
                            onClick={() => show(item.screen)}>
                            <span className="sidebar-icon"><Icon name={item.screen}/></span>{item.label}
                        </button>
                    </li>
                ))}
            </ul>
            <div className="sidebar-status">
                <div className={`sidebar-engine tone-${status.tone}`} data-testid="engine-status" data-state={engine.state}>
                    <span className="dot"/>{status.label}
                </div>
                {/* keyed by position (the reply's line, then the server's): a key per text would replace the element at every token */}
                {activity.map((line, index) => <div key={index} className="sidebar-activity" data-testid="sidebar-activity">{line}</div>)}
                {loaded != null && <div className="sidebar-model" title={loaded.card.path}>{loaded.card.name ?? loaded.card.fileName}</div>}
                {machine != null && (
                    <div className="sidebar-machine faint">
                        {machine.gpu != null ? `${machine.gpu.description || machine.gpu.name} · ${machine.backend}` : `CPU only · ${machine.cpu.cores} cores`}
                    </div>
                )}
                <label className="sidebar-theme faint">Theme
                    <select className="select" data-testid="theme" value={theme} onChange={(event) => setTheme(event.target.value as ThemeChoice)}>
                        <option value="system">System</option>
                        <option value="light">Light</option>
                        <option value="dark">Dark</option>
                    </select>
                </label>
            </div>
        </nav>
    );
}
