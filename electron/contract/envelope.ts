/**
 * The one envelope every process boundary of the app carries: requests with an id, their replies (a result or an
 * error with a contract code), and pushed events. Host ↔ engine child sends whole {@link Envelope}s over the
 * child-process channel (electron/contract/engineProtocol.ts); renderer ↔ host sends the same parts over its
 * transport: a {@link Reply} answers each request (Electron IPC's `invoke`, or the body of web mode's
 * `POST /api/request/<name>`, where HTTP pairs it with its request so the id is left out), and pushed events travel
 * as {@link EventEnvelope}s: on web mode's event stream (electron/web/serveWeb.ts) and on each event's own Electron IPC
 * channel (electron/main/main.ts, unwrapped by electron/main/preload.ts).
 */
import type {ContractError} from "./TensorwiseError.js";

/** A request's outcome as it crosses a process boundary (a thrown error would lose its code there). */
export type Reply<Result> = {ok: true; result: Result} | {ok: false; error: ContractError};

/** A request: `id` pairs it with its {@link ResponseEnvelope}. */
export type RequestEnvelope<Name extends string> = {kind: "request"; id: number; name: Name; arg: unknown};

/** The reply to the request with the same `id`. */
export type ResponseEnvelope = {kind: "response"; id: number} & Reply<unknown>;

/** A pushed event. */
export type EventEnvelope<Name extends string> = {kind: "event"; name: Name; payload: unknown};

/** Any message of a boundary whose requests and events are named by `RequestName` and `EventName`. */
export type Envelope<RequestName extends string, EventName extends string> =
    | RequestEnvelope<RequestName>
    | ResponseEnvelope
    | EventEnvelope<EventName>;

/** The envelope of a pushed event. */
export function eventEnvelope<Name extends string>(name: Name, payload: unknown): EventEnvelope<Name> {
    return {kind: "event", name, payload};
}

/**
 * Reads an {@link EventEnvelope} from untrusted JSON text; `null` for anything else, and for names `isName` rejects.
 */
export function parseEventEnvelope<Name extends string>(text: string, isName: (name: string) => name is Name): EventEnvelope<Name> | null {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch {
        return null;
    }
    if (value == null || typeof value !== "object") return null;
    const {kind, name, payload} = value as Record<string, unknown>;
    return kind === "event" && typeof name === "string" && isName(name) ? {kind, name, payload} : null;
}
