import {create} from "zustand";

export type Screen = "chat" | "model" | "offload" | "memory" | "dashboards" | "benchmark";

/** UI-only state: which screen is shown, whether files are being dragged over the window. */
export type UiStore = {
    screen: Screen;
    dragging: boolean;
    show(screen: Screen): void;
    setDragging(dragging: boolean): void;
};

export const useUiStore = create<UiStore>((set) => ({
    screen: "chat",
    dragging: false,
    show: (screen) => set({screen}),
    setDragging: (dragging) => set({dragging})
}));
