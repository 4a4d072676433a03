import {create} from "zustand";
import type {ErrorCode, ModelCard} from "../../../electron/contract/ipc";

/** The model being looked at: how it is being opened, its card, or why it could not be read. */
export type Inspection =
    | {status: "empty"}
    | {status: "uploading"; fileName: string; progress: number}
    | {status: "inspecting"; path: string}
    | {status: "ready"; card: ModelCard}
    | {status: "failed"; path: string; code: ErrorCode; message: string};

export type ModelStore = {
    inspection: Inspection;
    setInspection(inspection: Inspection): void;
};

export const useModelStore = create<ModelStore>((set) => ({
    inspection: {status: "empty"},
    setInspection: (inspection) => set({inspection})
}));
