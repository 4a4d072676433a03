import {create} from "zustand";
import type {ContractError, HubQuantList, HubSearchResult, ModelCard, TaskProgress} from "../../../electron/contract/ipc";

/** A request to the hub: not asked yet, running, answered or failed. */
export type HubStep<Result> =
    | {status: "idle"}
    | {status: "running"; taskId: string | null; detail: string | null}
    | {status: "ready"; result: Result}
    | {status: "failed"; error: ContractError};

/** A download: its quant, and how far it got. */
export type HubDownload =
    | {status: "idle"}
    | {status: "downloading"; repo: string; quant: string; taskId: string; progress: number | null; detail: string | null}
    | {status: "done"; repo: string; quant: string; card: ModelCard}
    | {status: "failed"; repo: string; quant: string; error: ContractError};

/** "Get a model": the search, the chosen repository's quants with their plans, and the download. */
export type HubStore = {
    query: string;
    search: HubStep<HubSearchResult[]>;
    repo: string | null;
    quants: HubStep<HubQuantList>;
    download: HubDownload;
    setQuery(query: string): void;
    setSearch(search: HubStore["search"]): void;
    setQuants(repo: string | null, quants: HubStore["quants"]): void;
    setDownload(download: HubDownload): void;
    /** A `task.progress` event: applied to the running quant list or download with that task id, ignored otherwise. */
    progress(progress: TaskProgress): void;
};

export const useHubStore = create<HubStore>((set, get) => ({
    query: "",
    search: {status: "idle"},
    repo: null,
    quants: {status: "idle"},
    download: {status: "idle"},
    setQuery: (query) => set({query}),
    setSearch: (search) => set({search}),
    setQuants: (repo, quants) => set({repo, quants}),
    setDownload: (download) => set({download}),
    progress: ({taskId, progress, detail}) => {
        const {quants, download} = get();
        if (quants.status === "running" && quants.taskId === taskId)
            set({quants: {...quants, detail: detail ?? null}});
        if (download.status === "downloading" && download.taskId === taskId)
            set({download: {...download, progress, detail: detail ?? null}});
    }
}));
