/**
 * What the Electron preload exposes to the renderer as `window.tensorwise`: one named function per request and one
 * subscribe function per event, built from the contract's types. No generic send/invoke passthrough.
 */
import type {ContractError, EventName, Events, RequestArg, RequestName, RequestResult} from "./ipc.js";

/** A request's outcome as it crosses IPC (thrown errors would lose their code there). */
export type Envelope<Result> = {ok: true; result: Result} | {ok: false; error: ContractError};

export type TensorwiseBridge = {
    requests: {[Name in RequestName]: (arg: RequestArg<Name>) => Promise<Envelope<RequestResult<Name>>>};
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
