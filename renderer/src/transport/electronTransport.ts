import type {TensorwiseBridge} from "../../../electron/contract/bridge";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import type {Transport} from "./Transport";

declare global {
    interface Window {
        tensorwise?: TensorwiseBridge;
    }
}

/** The Electron transport: the preload's named functions (`window.tensorwise`). */
export function electronTransport(bridge: TensorwiseBridge): Transport {
    return {
        kind: "electron",
        hasNativeDialog: true,
        async request(name, ...arg) {
            const invoke = bridge.requests[name] as (arg: unknown) => ReturnType<TensorwiseBridge["requests"][typeof name]>;
            const envelope = await invoke(arg[0]);
            if (!envelope.ok)
                throw TensorwiseError.fromContract(envelope.error);
            return envelope.result as never;
        },
        on(name, listener) {
            const subscribe = bridge.events[name] as (listener: (payload: unknown) => void) => () => void;
            return subscribe(listener as (payload: unknown) => void);
        },
        async saveBenchReport(id, format) {
            return await this.request("dialog.saveBenchReport", {id, format});
        },
        async modelPathForFile(file) {
            const filePath = bridge.pathForFile(file);
            if (filePath === "")
                throw new TensorwiseError("bad-path", `${file.name} has no path on disk`);
            return filePath;
        }
    };
}
