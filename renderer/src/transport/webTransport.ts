import {parseEventEnvelope, type Reply} from "../../../electron/contract/envelope";
import type {EventName, Events} from "../../../electron/contract/ipc";
import {isEventName} from "../../../electron/contract/requestNames";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import type {Transport} from "./Transport";

/** The per-launch token: from the URL fragment the server printed, kept for reloads of this tab. */
export function readToken(): string | null {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash != null) {
        sessionStorage.setItem("tensorwise-token", fromHash);
        return fromHash;
    }
    return sessionStorage.getItem("tensorwise-token");
}

type Listeners = Map<EventName, Set<(payload: never) => void>>;

/** Web mode: `POST /api/request/<name>` and events over Server-Sent Events, authenticated by the launch token. */
export function webTransport(token: string): Transport {
    const listeners: Listeners = new Map();
    const stream = openEventStream(token, listeners);
    return {
        kind: "web",
        hasNativeDialog: false,
        async request(name, ...arg) {
            return await postRequest(token, await stream.clientId(), name, arg[0]) as never;
        },
        on<Name extends EventName>(name: Name, listener: (payload: Events[Name]) => void) {
            let set = listeners.get(name);
            if (set == null)
                listeners.set(name, set = new Set());
            set.add(listener as (payload: never) => void);
            return () => set.delete(listener as (payload: never) => void);
        },
        async saveBenchReport(id, format) {
            // asks first, so a missing report fails with the host's message instead of a broken download
            const {fileName} = await this.request("bench.export", {id, format});
            // a plain link cannot send headers: the token goes in the query, as for the event stream
            download(`/api/bench/${encodeURIComponent(id)}/${format}?token=${encodeURIComponent(token)}`, fileName);
            return fileName;
        },
        modelPathForFile: (file, onProgress) => uploadModel(token, file, onProgress)
    };
}

/**
 * The event stream: every contract event arrives as an unnamed message holding its EventEnvelope
 * (electron/contract/envelope.ts) and goes to its listeners. `clientId()` waits for the stream's `hello` (again after
 * a reconnect, which EventSource does by itself), since the server pairs each request with its client's stream.
 */
function openEventStream(token: string, listeners: Listeners): {clientId(): Promise<string>} {
    let clientId: string | null = null;
    let ready!: Promise<void>;
    let markReady: () => void = () => {};
    const resetReady = () => {
        ready = new Promise((resolve) => markReady = resolve);
    };
    resetReady();
    const source = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
    source.addEventListener("hello", (event) => {
        clientId = (JSON.parse((event as MessageEvent<string>).data) as {clientId: string}).clientId;
        markReady();
    });
    source.addEventListener("error", () => {
        if (clientId != null) {
            clientId = null;
            resetReady();
        }
    });
    source.addEventListener("message", (event) => {
        const envelope = parseEventEnvelope(event.data as string, isEventName);
        if (envelope == null)
            return;
        for (const listener of listeners.get(envelope.name) ?? [])
            listener(envelope.payload as never);
    });
    return {
        async clientId() {
            await ready;
            return clientId ?? "";
        }
    };
}

/** One contract request; its Reply's error is thrown as a TensorwiseError with the host's code and sentence. */
async function postRequest(token: string, clientId: string, name: string, arg: unknown): Promise<unknown> {
    const response = await fetch(`/api/request/${encodeURIComponent(name)}`, {
        method: "POST",
        headers: {"Authorization": `Bearer ${token}`, "Content-Type": "application/json", "X-Tensorwise-Client": clientId},
        body: JSON.stringify({arg: arg ?? null})
    });
    const reply = await response.json() as Reply<unknown>;
    if (!reply.ok)
        throw TensorwiseError.fromContract(reply.error);
    return reply.result;
}

/** Starts a browser download of `href` saved as `fileName`. */
function download(href: string, fileName: string): void {
    const link = document.createElement("a");
    link.href = href;
    link.download = fileName;
    link.rel = "noopener";
    document.body.append(link);
    link.click();
    link.remove();
}

/** `PUT /api/upload`: stores a dropped model under the host's models folder and resolves with its path there. */
function uploadModel(token: string, file: File, onProgress?: (fraction: number) => void): Promise<string> {
    return new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open("PUT", `/api/upload?name=${encodeURIComponent(file.name)}`);
        xhr.setRequestHeader("Authorization", `Bearer ${token}`);
        xhr.upload.addEventListener("progress", (event) => {
            if (event.lengthComputable)
                onProgress?.(event.loaded / event.total);
        });
        xhr.addEventListener("load", () => {
            try {
                const reply = JSON.parse(xhr.responseText) as Reply<{path: string}>;
                if (reply.ok)
                    resolve(reply.result.path);
                else
                    reject(TensorwiseError.fromContract(reply.error));
            } catch {
                reject(new TensorwiseError("upload-failed", `upload failed with HTTP ${xhr.status}`));
            }
        });
        xhr.addEventListener("error", () => reject(new TensorwiseError("upload-failed", "the upload was interrupted")));
        xhr.send(file);
    });
}
