/**
 * An in-memory stand-in for the Electron preload bridge (`window.tensorwise`): requests are answered by test-supplied
 * handlers (a handler may hold its answer back to stage a race), events are emitted by the test. It replaces the IPC
 * boundary only; the renderer's transport, actions and stores run as they do in the app.
 */
import type {TensorwiseBridge} from "../../../electron/contract/bridge";
import type {EventName, Events, RequestArg, RequestName, RequestResult} from "../../../electron/contract/ipc";
import {toContractError} from "../../../electron/contract/TensorwiseError";

/** Answers one request. */
export type FakeHandler<Name extends RequestName> = (arg: RequestArg<Name>) => Promise<RequestResult<Name>> | RequestResult<Name>;

/** A fake bridge and the controls a test uses. */
export type FakeBridge = {
    readonly bridge: TensorwiseBridge;
    /** Sets (or replaces) the handler of `name`; requests without one fail with code `unavailable`. */
    handle<Name extends RequestName>(name: Name, handler: FakeHandler<Name>): void;
    /** Delivers an event to every subscriber, as the host would. */
    emit<Name extends EventName>(name: Name, payload: Events[Name]): void;
    /** Names of the requests made so far, in order. */
    readonly requests: RequestName[];
};

/** A promise with its resolve function outside, for answers a test releases when it chooses. */
export function deferred<T>(): {promise: Promise<T>; resolve: (value: T) => void} {
    let resolve!: (value: T) => void;
    const promise = new Promise<T>((r) => { resolve = r; });
    return {promise, resolve};
}

export function fakeBridge(): FakeBridge {
    const handlers = new Map<string, (arg: unknown) => unknown>();
    const listeners = new Map<string, Set<(payload: unknown) => void>>();
    const requests: RequestName[] = [];
    const requestProxy = new Proxy({}, {
        get: (_target, name: string) => async (arg: unknown) => {
            requests.push(name as RequestName);
            const handler = handlers.get(name);
            if (handler == null) return {ok: false, error: {code: "internal", message: `no fake answer for ${name}`}};
            try {
                return {ok: true, result: await handler(arg)};
            } catch (error) {
                return {ok: false, error: toContractError(error)};
            }
        }
    });
    const eventProxy = new Proxy({}, {
        get: (_target, name: string) => (listener: (payload: unknown) => void) => {
            const set = listeners.get(name) ?? new Set();
            set.add(listener);
            listeners.set(name, set);
            return () => set.delete(listener);
        }
    });
    return {
        bridge: {requests: requestProxy, events: eventProxy, pathForFile: () => ""} as unknown as TensorwiseBridge,
        handle(name, handler) {
            handlers.set(name, handler as (arg: unknown) => unknown);
        },
        emit(name, payload) {
            for (const listener of listeners.get(name) ?? []) listener(payload);
        },
        requests
    };
}
