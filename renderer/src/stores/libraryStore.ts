import {create} from "zustand";
import type {ContractError, RecentModel} from "../../../electron/contract/ipc";

/** The model library as the host keeps it, and the last library action that failed (with its model's file name). */
export type LibraryStore = {
    models: RecentModel[];
    failure: {fileName: string; error: ContractError} | null;
    setModels(models: RecentModel[]): void;
    setFailure(failure: LibraryStore["failure"]): void;
};

export const useLibraryStore = create<LibraryStore>((set) => ({
    models: [],
    failure: null,
    setModels: (models) => set({models}),
    setFailure: (failure) => set({failure})
}));
