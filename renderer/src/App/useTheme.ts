import {useEffect} from "react";
import {useUiStore} from "../stores/uiStore";

/**
 * Applies the chosen theme as `data-theme` on the document element (theme.css keys its colour variables on it);
 * `system` follows `prefers-color-scheme` and changes with it.
 */
export function useTheme(): void {
    const theme = useUiStore((state) => state.theme);
    useEffect(() => {
        const query = window.matchMedia("(prefers-color-scheme: light)");
        const apply = () => {
            document.documentElement.dataset.theme = theme === "system" ? (query.matches ? "light" : "dark") : theme;
        };
        apply();
        query.addEventListener("change", apply);
        return () => query.removeEventListener("change", apply);
    }, [theme]);
}
