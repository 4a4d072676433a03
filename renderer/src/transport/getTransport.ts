import {electronTransport} from "./electronTransport";
import type {Transport} from "./Transport";
import {readToken, webTransport} from "./webTransport";

let transport: Transport | null = null;

/** Chooses the transport once, at startup: the preload bridge when present, else web mode. */
export function initTransport(): Transport {
    if (transport != null)
        return transport;
    if (window.tensorwise != null)
        transport = electronTransport(window.tensorwise);
    else {
        const token = readToken();
        if (token == null)
            throw new Error("This page needs the link printed by `npm start` (it carries the launch token).");
        transport = webTransport(token);
    }
    return transport;
}

export function getTransport(): Transport {
    if (transport == null)
        throw new Error("transport used before initTransport()");
    return transport;
}
