/**
 * Wires store + engine child + host service together: what Electron main and web mode both start with. The data folder
 * is made private first (privateDataDir.ts); a folder that cannot be written still starts, and the store's notices say
 * why nothing is saved.
 */
import path from "node:path";
import {ConversationStore} from "./conversations/ConversationStore.js";
import {EngineClient, type EngineClientOptions} from "./engineChild/EngineClient.js";
import type {HostPlatform} from "./HostContext.js";
import {HostService} from "./HostService.js";
import type {ModelAccessOptions} from "./model/ModelAccess.js";
import {makeDataDirPrivate} from "./storage/privateDataDir.js";

export type StartedHost = {service: HostService; engine: EngineClient; store: ConversationStore; dispose(): Promise<void>};

export async function startHost(options: {
    dataDir: string;
    platform?: HostPlatform;
    engine?: Omit<EngineClientOptions, "onLog">;
    onEngineLog?: EngineClientOptions["onLog"];
    /** Which model files clients may open. Defaults to only `<dataDir>/models`. */
    modelAccess?: ModelAccessOptions;
}): Promise<StartedHost> {
    // a read-only or full disk is reported by the store below; only other failures stop the start
    await makeDataDirPrivate(options.dataDir);
    const store = await ConversationStore.open(options.dataDir);
    const engine = new EngineClient({...options.engine, onLog: options.onEngineLog});
    const service = new HostService(store, engine, options.platform, {
        benchDir: path.join(options.dataDir, "bench"),
        modelAccess: options.modelAccess ?? {folders: [path.join(options.dataDir, "models")]}
    });
    engine.onState((state) => {
        if (state.state === "running")
            options.onEngineLog?.("stdout", `engine started pid=${state.pid}`);
        else if (state.state === "crashed")
            options.onEngineLog?.("stderr", `engine crashed: ${state.reason.split("\n")[0]}`);
    });
    // The window comes up at once; the engine starts behind it and reports its state as events.
    service.startEngine().catch((error: unknown) => options.onEngineLog?.("stderr", `engine failed to start: ${(error as Error).message}`));
    return {
        service, engine, store,
        async dispose() {
            await service.dispose();
            await engine.stop();
        }
    };
}
