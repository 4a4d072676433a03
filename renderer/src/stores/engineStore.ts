import {create} from "zustand";
import type {EngineState, MachineDescription} from "../../../electron/contract/ipc";

/** Mirror of the engine's state (`engine.state` events) and of `machine.describe`. */
export type EngineStore = {
    engine: EngineState;
    machine: MachineDescription | null;
    restarting: boolean;
    setEngine(engine: EngineState): void;
    setMachine(machine: MachineDescription | null): void;
    setRestarting(restarting: boolean): void;
};

export const useEngineStore = create<EngineStore>((set) => ({
    engine: {state: "starting"},
    machine: null,
    restarting: false,
    setEngine: (engine) => set({engine}),
    setMachine: (machine) => set({machine}),
    setRestarting: (restarting) => set({restarting})
}));
