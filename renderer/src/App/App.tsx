import {useEffect} from "react";
import {CrashBanner} from "../components/CrashBanner/CrashBanner";
import {ErrorBoundary} from "../components/ErrorBoundary/ErrorBoundary";
import {DropOverlay} from "../components/DropOverlay/DropOverlay";
import {Sidebar} from "../components/Sidebar/Sidebar";
import {Benchmark} from "../screens/Benchmark/Benchmark";
import {Chat} from "../screens/Chat/Chat";
import {Dashboards} from "../screens/Dashboards/Dashboards";
import {Memory} from "../screens/Memory/Memory";
import {GetModel} from "../screens/GetModel/GetModel";
import {Model} from "../screens/Model/Model";
import {Offload} from "../screens/Offload/Offload";
import {Server} from "../screens/Server/Server";
import {Tools} from "../screens/Tools/Tools";
import {useChatStore} from "../stores/chatStore";
import {useUiStore} from "../stores/uiStore";
import {useTheme} from "./useTheme";
import {useWindowDrop} from "./useWindowDrop";
import "./App.css";

export function App() {
    const screen = useUiStore((state) => state.screen);
    useWindowDrop();
    useTheme();
    useEffect(() => {
        document.title = `tensorwise · ${screen}`;
    }, [screen]);
    return (
        <div className="app">
            <Sidebar/>
            <main className="app-main">
                <CrashBanner/>
                <div className="app-screen" data-screen={screen}>
                    {/* one screen that fails to render shows an error panel; the sidebar and the other screens stay */}
                    <ErrorBoundary key={screen} what={`The ${screen} screen`}
                        backLabel={screen === "chat" ? "Close this conversation" : "Back to Chat"}
                        onBack={() => screen === "chat" ? useChatStore.getState().setActive(null) : useUiStore.getState().show("chat")}>
                        {screen === "chat" && <Chat/>}
                        {screen === "get-model" && <GetModel/>}
                        {screen === "model" && <Model/>}
                        {screen === "offload" && <Offload/>}
                        {screen === "memory" && <Memory/>}
                        {screen === "dashboards" && <Dashboards/>}
                        {screen === "benchmark" && <Benchmark/>}
                        {screen === "server" && <Server/>}
                        {screen === "tools" && <Tools/>}
                    </ErrorBoundary>
                </div>
            </main>
            <DropOverlay/>
        </div>
    );
}
