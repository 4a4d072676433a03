import {create} from "zustand";

export type Screen = "chat" | "get-model" | "model" | "offload" | "memory" | "dashboards" | "benchmark" | "server" | "tools";

/** The colour theme the user chose; `system` follows the operating system's light/dark setting. */
export type ThemeChoice = "system" | "light" | "dark";

const THEME_KEY = "tensorwise.theme";

function savedTheme(): ThemeChoice {
    try {
        const saved = globalThis.localStorage?.getItem(THEME_KEY);
        return saved === "light" || saved === "dark" || saved === "system" ? saved : "system";
    } catch {
        return "system";
    }
}

/** UI-only state: which screen is shown, whether files are being dragged over the window, the theme. */
export type UiStore = {
    screen: Screen;
    dragging: boolean;
    theme: ThemeChoice;
    show(screen: Screen): void;
    setDragging(dragging: boolean): void;
    /** Chooses the theme and remembers it on this machine (localStorage). */
    setTheme(theme: ThemeChoice): void;
};

export const useUiStore = create<UiStore>((set) => ({
    screen: "chat",
    dragging: false,
    theme: savedTheme(),
    show: (screen) => set({screen}),
    setDragging: (dragging) => set({dragging}),
    setTheme: (theme) => {
        try {
            globalThis.localStorage?.setItem(THEME_KEY, theme);
        } catch {
            // storage unavailable (private window): the choice lasts for this session
        }
        set({theme});
    }
}));
