/**
 * Sandboxed preload (bundled to CommonJS by scripts/buildPreload.mjs): exposes `window.tensorwise` with one named
 * function per contract request and one subscribe function per event, each bound to its own fixed channel. There is
 * no generic send/invoke: the page cannot reach any channel the contract does not name.
 */
import {contextBridge, ipcRenderer, webUtils, type IpcRendererEvent} from "electron";
import {eventChannel, requestChannel, type TensorwiseBridge} from "../contract/bridge.js";
import type {EventEnvelope} from "../contract/envelope.js";
import type {EventName, RequestName} from "../contract/ipc.js";
import {eventNames, requestNames} from "../contract/requestNames.js";

function requestFunction(name: RequestName) {
    const channel = requestChannel(name);
    return (arg: unknown) => ipcRenderer.invoke(channel, arg);
}

function eventFunction(name: EventName) {
    const channel = eventChannel(name);
    return (listener: (payload: unknown) => void) => {
        // main sends the contract's event envelope (electron/contract/envelope.ts); a message of another shape or for
        // another event is dropped
        const handler = (_event: IpcRendererEvent, envelope: unknown) => {
            const {kind, name: sent, payload} = (envelope ?? {}) as Partial<EventEnvelope<EventName>>;
            if (kind === "event" && sent === name)
                listener(payload);
        };
        ipcRenderer.on(channel, handler);
        return () => {
            ipcRenderer.removeListener(channel, handler);
        };
    };
}

const bridge = {
    requests: Object.fromEntries(requestNames.map((name) => [name, requestFunction(name)])),
    events: Object.fromEntries(eventNames.map((name) => [name, eventFunction(name)])),
    pathForFile: (file: File) => webUtils.getPathForFile(file)
} as unknown as TensorwiseBridge;

contextBridge.exposeInMainWorld("tensorwise", bridge);
