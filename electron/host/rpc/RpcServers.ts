/**
 * The rpc-servers of the settings, as the host runs them: the persisted list ({@link RpcServerList}), each entry probed
 * with a real RPC hello (probeRpcServer.ts), and the engine child started with the ones that answered. One that does
 * not (stopped, silent, not an rpc-server, another protocol version) stays in the list, marked not reachable with the
 * reason, and is left out until it answers again: ggml-rpc aborts the engine on a server it cannot use
 * (rpc_dispatcher::start) and waits forever on a silent one.
 */
import type {RpcServerEntry, RpcServersState} from "../../contract/rpc.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {parseRpcEndpoint} from "../../engine/rpc/parseRpcEndpoint.js";
import {probeRpcServer} from "../../engine/rpc/probeRpcServer.js";
import type {EngineClient} from "../engineChild/EngineClient.js";
import {RpcServerList} from "./RpcServerList.js";

export class RpcServers {
    private readonly list: RpcServerList;

    /** `file`: where the list is kept; `engine`: the child that registers the reachable servers when it starts. */
    constructor(file: string, private readonly engine: EngineClient) {
        this.list = new RpcServerList(file);
    }

    /**
     * Every added rpc-server, probed now — except those the running engine is connected to: an rpc-server serves one
     * client at a time, so a probe would wait behind the engine; the engine's connection is the better evidence.
     */
    async state(): Promise<RpcServersState> {
        const endpoints = await this.list.list();
        const inUse = this.engine.state.state === "running" ? this.engine.rpcServers : [];
        return {servers: await Promise.all(endpoints.map((endpoint) =>
            inUse.includes(endpoint) ? {endpoint, reachable: true, problem: null} : probe(endpoint)))};
    }

    /**
     * Probes the added rpc-servers and hands the reachable ones to the engine for its next start. Returns whether
     * that changed the engine's list (so a running engine needs a restart to use it).
     */
    async prepareEngine(): Promise<{state: RpcServersState; changed: boolean}> {
        const state = await this.state();
        const reachable = state.servers.filter((entry) => entry.reachable).map((entry) => entry.endpoint);
        const changed = reachable.join(",") !== this.engine.rpcServers.join(",");
        this.engine.rpcServers = reachable;
        return {state, changed};
    }

    /** Adds `endpoint` after checking that an rpc-server answers there; nothing is kept when none does. */
    async add(endpoint: string): Promise<void> {
        const entry = await probe(endpoint);
        if (!entry.reachable)
            throw new TensorwiseError("rpc-unreachable", entry.problem ?? `no rpc-server answers at ${endpoint}`);
        await this.list.add(endpoint);
    }

    async remove(endpoint: string): Promise<void> {
        await this.list.remove(endpoint);
    }
}

async function probe(endpoint: string): Promise<RpcServerEntry> {
    try {
        await probeRpcServer(parseRpcEndpoint(endpoint));
        return {endpoint, reachable: true, problem: null};
    } catch (error) {
        return {endpoint, reachable: false, problem: (error as Error).message};
    }
}
