import type {BenchExportFormat, EventName, Events, RequestArg, RequestName, RequestResult} from "../../../electron/contract/ipc";

/** Arguments of a request: none for `void` requests. */
export type ArgOf<Name extends RequestName> = RequestArg<Name> extends void ? [] : [RequestArg<Name>];

/** How the renderer talks to the engine host: Electron's preload bridge or web mode's fetch + Server-Sent Events. */
export interface Transport {
    readonly kind: "electron" | "web";
    request<Name extends RequestName>(name: Name, ...arg: ArgOf<Name>): Promise<RequestResult<Name>>;
    on<Name extends EventName>(name: Name, listener: (payload: Events[Name]) => void): () => void;
    /**
     * A path the engine can open for a dropped or picked file: the file's own path in Electron, an upload into the
     * host's models folder in web mode.
     */
    modelPathForFile(file: File, onProgress?: (fraction: number) => void): Promise<string>;
    /** Whether `dialog.openModel` opens a native dialog (Electron) or is unavailable (web). */
    readonly hasNativeDialog: boolean;
    /**
     * Saves a benchmark report where the user wants it: a native save dialog (Electron; the saved path, `null` when
     * cancelled) or a browser download (web; the file name).
     */
    saveBenchReport(id: string, format: BenchExportFormat): Promise<string | null>;
}

export function errorMessage(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}
