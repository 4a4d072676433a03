/** The settings' rpc-server requests: list (probed), add and remove, restarting the engine when its list changes. */
import type {RpcServersState} from "../../contract/rpc.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {HostContext, RequestHandlers} from "../HostContext.js";

export function rpcRequests(host: HostContext): RequestHandlers<"rpc.list" | "rpc.add" | "rpc.remove"> {
    return {
        "rpc.list": async () => await host.rpc.state(),
        "rpc.add": async ({endpoint}) => {
            refuseWhileBusy(host);
            await host.rpc.add(endpoint);
            return await restartWithRpcServers(host);
        },
        "rpc.remove": async ({endpoint}) => {
            refuseWhileBusy(host);
            await host.rpc.remove(endpoint);
            return await restartWithRpcServers(host);
        }
    };
}

/** A restart would end the running task (a load, a benchmark): the user waits for it instead. */
function refuseWhileBusy(host: HostContext): void {
    const state = host.engineState();
    if (state.state === "busy")
        throw new TensorwiseError("busy", `the engine is busy (${state.task}): change the rpc-servers once it is done`);
}

/**
 * llama.cpp picks its devices once per process (add_rpc_devices before any model loads), so a changed list needs a
 * fresh engine; the loaded model is then loaded again as after a crash.
 */
async function restartWithRpcServers(host: HostContext): Promise<RpcServersState> {
    const {state, changed} = await host.rpc.prepareEngine();
    if (changed && host.engine.state.state !== "stopped") {
        host.shared.loaded = null;
        await host.engine.restart();
        const replay = host.shared.lastLoad;
        if (replay != null)
            void host.runLoad(replay, "reloading the model").catch(() => {});
    }
    return state;
}
