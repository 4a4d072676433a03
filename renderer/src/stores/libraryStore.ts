import {create} from "zustand";
import type {ContractError, FolderModels, RecentModel} from "../../../electron/contract/ipc";

/** The model library as the host keeps it, the models in the models folders, and the last library action that failed (with its model's file name). */
export type LibraryStore = {
    models: RecentModel[];
    failure: {fileName: string; error: ContractError} | null;
    /** Every `.gguf` in the models folders (the host pushes `library.files` when one changes). */
    folders: FolderModels;
    setModels(models: RecentModel[]): void;
    setFolders(folders: FolderModels): void;
    setFailure(failure: LibraryStore["failure"]): void;
};

export const useLibraryStore = create<LibraryStore>((set) => ({
    models: [],
    failure: null,
    folders: {models: [], notices: []},
    setModels: (models) => set({models}),
    setFolders: (folders) => set({folders}),
    setFailure: (failure) => set({failure})
}));
