import {create} from "zustand";
import type {EngineState, MachineDescription} from "../../../electron/contract/ipc";

/** Mirror of the engine's state (`engine.state` events) and of `machine.describe`. */
export type EngineStore = {
    engine: EngineState;
    /** Bumped on every engine state applied, so a slower request answer cannot overwrite a newer event. */
    engineVersion: number;
    machine: MachineDescription | null;
    restarting: boolean;
    setEngine(engine: EngineState): void;
    setMachine(machine: MachineDescription | null): void;
    setRestarting(restarting: boolean): void;
};

export const useEngineStore = create<EngineStore>((set) => ({
    engine: {state: "starting"},
    engineVersion: 0,
    machine: null,
    restarting: false,
    setEngine: (engine) => set((store) => ({engine, engineVersion: store.engineVersion + 1})),
    setMachine: (machine) => set({machine}),
    setRestarting: (restarting) => set({restarting})
}));
