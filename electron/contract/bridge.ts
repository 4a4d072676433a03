/**
 * What the Electron preload exposes to the renderer as `window.tensorwise`: one named function per request and one
 * subscribe function per event, built from the contract's types. No generic send/invoke passthrough.
 */
import type {Reply} from "./envelope.js";
import type {EventName, Events, RequestArg, RequestName, RequestResult} from "./ipc.js";

export type TensorwiseBridge = {
    requests: {[Name in RequestName]: (arg: RequestArg<Name>) => Promise<Reply<RequestResult<Name>>>};
    events: {[Name in EventName]: (listener: (payload: Events[Name]) => void) => () => void};
    /** The file system path of a dropped or picked file (Electron's `webUtils.getPathForFile`). */
    pathForFile(file: File): string;
};

/** The IPC channel of a request; events use `event:<name>`. */
export function requestChannel(name: RequestName): string {
    return `request:${name}`;
}

export function eventChannel(name: EventName): string {
    return `event:${name}`;
}
