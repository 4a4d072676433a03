import {create} from "zustand";
import type {ContractError, ModelCard} from "../../../electron/contract/ipc";

/**
 * The model being looked at (opened: validated and inspected, not in memory): how it is being opened, its card, or why
 * it could not be read. `fileName` is the user's own file name; `copyPath` the app's copy of it, for a web upload.
 */
export type Inspection =
    | {status: "empty"}
    | {status: "uploading"; fileName: string; progress: number}
    | {status: "inspecting"; path: string}
    | {status: "ready"; card: ModelCard}
    | {status: "failed"; path: string; fileName: string; copyPath?: string; error: ContractError};

export type ModelStore = {
    inspection: Inspection;
    setInspection(inspection: Inspection): void;
};

export const useModelStore = create<ModelStore>((set) => ({
    inspection: {status: "empty"},
    setInspection: (inspection) => set({inspection})
}));
