/** Benchmarks: start (on the loaded model or a named one), stop, list, read, and the report file of an export. */
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {HostContext, RequestHandlers} from "../HostContext.js";
import {benchGrid} from "./benchGrid.js";

type BenchRequestName = "bench.start" | "bench.stop" | "bench.list" | "bench.get" | "bench.export";

export function benchRequests(host: HostContext): RequestHandlers<BenchRequestName> {
    return {
        "bench.start": async (arg) => {
            const {path: requested, ...request} = benchGrid(arg);
            if (host.bench.runningId != null)
                throw new TensorwiseError("bench-running", "a benchmark is already running: stop it first");
            const modelPath = requested ?? host.shared.loaded?.card.path ?? null;
            if (modelPath == null)
                throw new TensorwiseError("no-model", "no model is loaded: load one (or name its path) to benchmark it");
            await host.bench.start({...request, path: await host.access.check(modelPath)});
        },
        "bench.stop": async (arg) => await host.bench.stop(arg.benchId),
        "bench.list": async () => await host.benchStore.list(host.bench.runningId),
        "bench.get": async (arg) => await host.benchStore.get(arg.id, host.bench.runningId),
        "bench.export": async (arg) => await host.benchStore.exportFile(arg.id, arg.format)
    };
}
