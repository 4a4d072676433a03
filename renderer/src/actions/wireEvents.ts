import {useBenchStore} from "../stores/benchStore";
import {useChatStore} from "../stores/chatStore";
import {useEngineStore} from "../stores/engineStore";
import {usePlanStore} from "../stores/planStore";
import {useLibraryStore} from "../stores/libraryStore";
import {useServerStore} from "../stores/serverStore";
import type {Transport} from "../transport/Transport";
import {openBench, refreshBenchList} from "./benchActions";
import {refreshConversations, reloadConversation} from "./chatActions";
import {refreshLoaded, refreshMachine} from "./engineActions";
import {useHubStore} from "../stores/hubStore";
import {useToolsStore} from "../stores/toolsStore";

/** Feeds every domain store from the host's typed events. Returns an unsubscribe function. */
export function wireEvents(transport: Transport): () => void {
    const offs = [
        transport.on("engine.state", (state) => {
            const previous = useEngineStore.getState().engine;
            useEngineStore.getState().setEngine(state);
            if (state.state === "crashed" || state.state === "starting")
                usePlanStore.getState().setLoaded(null);
            else if (state.state === "ready" && previous.state !== "ready")
                void refreshLoaded();
            if (state.state !== "crashed" && previous.state === "starting")
                void refreshMachine();
        }),
        transport.on("task.progress", (progress) => {
            usePlanStore.getState().progress(progress);
            useHubStore.getState().progress(progress);
        }),
        transport.on("chat.delta", (delta) => useChatStore.getState().appendDelta(delta)),
        transport.on("chat.prompt", (progress) => useChatStore.getState().promptProgress(progress)),
        transport.on("chat.message", ({streamId, message}) => useChatStore.getState().roundMessage(streamId, message)),
        transport.on("tools.state", (state) => useToolsStore.getState().setState(state)),
        transport.on("chat.done", ({streamId, message}) => {
            useChatStore.getState().finishStream(streamId, message);
            void refreshConversations();
        }),
        transport.on("chat.error", ({streamId, conversationId, error, code}) => {
            useChatStore.getState().finishStream(streamId, null);
            useChatStore.getState().setError(conversationId, error, code);
            // the host kept what came before the failure; show exactly what is on disk
            void reloadConversation(conversationId);
            void refreshConversations();
        }),
        transport.on("bench.progress", (progress) => {
            useBenchStore.getState().progress(progress);
            const {selectedId} = useBenchStore.getState();
            // a finished budget × strategy run is on disk: show it with its derived tables
            if (progress.lastResult != null) {
                void refreshBenchList();
                if (selectedId == null || selectedId === progress.benchId)
                    void openBench(progress.benchId);
            }
        }),
        transport.on("bench.done", ({benchId}) => {
            useBenchStore.getState().finish(benchId, {status: "idle"});
            void refreshBenchList();
            if (useBenchStore.getState().selectedId === benchId)
                void openBench(benchId);
        }),
        transport.on("library.files", (folders) => useLibraryStore.getState().setFolders(folders)),
        transport.on("server.state", (state) => {
            useServerStore.getState().setServer(state);
            // serving on several sequences made the context again: the Memory screen shows its KV cache
            if (state.status === "serving")
                void refreshLoaded();
        }),
        transport.on("bench.error", ({benchId, error}) => {
            useBenchStore.getState().finish(benchId, {status: "failed", benchId, message: error});
            void refreshBenchList();
            if (useBenchStore.getState().selectedId === benchId)
                void openBench(benchId);
        })
    ];
    return () => offs.forEach((off) => off());
}
