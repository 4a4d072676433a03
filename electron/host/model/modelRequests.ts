/** The machine, the engine's state and the model: inspect, load (auto-offload or a layer split), unload, restart. */
import type {HostContext, RequestHandlers} from "../HostContext.js";
import type {SpeculativeRequest} from "../../contract/speculative.js";

type ModelRequestName =
    | "machine.describe" | "engine.state" | "engine.restart"
    | "model.inspect" | "model.autoOffload" | "model.load" | "model.unload" | "model.current" | "task.cancel";

export function modelRequests(host: HostContext): RequestHandlers<ModelRequestName> {
    return {
        "machine.describe": async () => await host.engine.request("describe", undefined),
        "engine.state": async () => host.engineState(),
        "engine.restart": async () => {
            host.shared.loaded = null;
            // rpc-servers are probed again once the engine let go of them (each serves one client at a time): one
            // started since the last start joins, one that stopped or no longer answers is left out
            await host.engine.stop();
            await host.rpc.prepareEngine().catch(() => {});
            await host.engine.start();
            const replay = host.shared.lastLoad;
            if (replay != null)
                void host.runLoad(replay, "reloading the model").catch(() => {});
            return host.engineState();
        },
        "model.inspect": async (arg) => {
            const modelPath = await host.access.check(arg.path);
            try {
                const card = await host.engine.request("inspect", {path: modelPath});
                host.uploads.accepted(modelPath);
                await host.library.opened(card).catch(() => {});
                return card;
            } catch (error) {
                throw await host.uploads.rejected(modelPath, error);
            }
        },
        "model.autoOffload": async (arg) =>
            await host.runLoad({name: "autoOffload", arg: {...arg, path: await host.access.check(arg.path), ...await draftAccess(host, arg)}}, "auto-offload"),
        "task.cancel": async (arg) => {
            host.hostTasks.get(arg.taskId)?.abort();
            if (host.engine.state.state === "running")
                await host.engine.request("cancelTask", arg);
        },
        "model.load": async (arg) => await host.runLoad({name: "load", arg: {...arg, path: await host.access.check(arg.path), ...await draftAccess(host, arg)}}, "load"),
        "model.unload": async () => {
            for (const stream of host.streams.values())
                await stream.stop();
            await host.engine.request("unload", undefined);
            host.shared.loaded = null;
            host.shared.lastLoad = null;
            host.broadcastState();
        },
        "model.current": async () => {
            if (host.engine.state.state !== "running")
                return null;
            host.shared.loaded = await host.engine.request("current", undefined);
            return host.shared.loaded;
        }
    };
}

/** A load's speculation with its draft model's path checked as the model's is (the web client names files too). */
async function draftAccess(host: HostContext, arg: {speculative?: SpeculativeRequest}): Promise<{speculative?: SpeculativeRequest}> {
    const spec = arg.speculative;
    if (spec?.draftPath == null) return {};
    return {speculative: {...spec, draftPath: await host.access.check(spec.draftPath)}};
}
