import type {Page} from "playwright-core";

export type MemoryRow = {bufferType: string; isHost: boolean; measuredWeights: number | null; plannedWeights: number | null; measuredKv: number | null;
    measuredScratch: number | null; plannedAs: string | null; device: string};

/** One physical memory's card: capacity, free after load, budget, planned and measured totals, and what it says. */
export type MemoryDevice = {
    device: string; kind: string | null; total: number | null; free: number | null; budget: number | null;
    plannedWeights: number | null; plannedKv: number | null; plannedScratch: number | null;
    measuredWeights: number | null; measuredKv: number | null; measuredScratch: number | null;
    /** The bar's own markers and segments, as drawn. */
    budgetMarker: boolean; plannedMarker: boolean; segments: string[];
    /** Header cells of its planned/measured table, and the table's row labels. */
    columns: string[]; rowLabels: string[];
    notes: string[];
};

/** The Memory screen: one card per physical memory (system RAM, each GPU) with its buffer types, planned vs measured. */
export class MemoryPage {
    constructor(readonly page: Page) {}

    async rows(): Promise<MemoryRow[]> {
        await this.page.getByTestId("memory-device").first().waitFor();
        return await this.page.getByTestId("memory-row").evaluateAll((elements) => elements.map((element) => {
            const number = (name: string) => {
                const value = element.getAttribute(name);
                return value == null || value === "" ? null : Number(value);
            };
            return {
                bufferType: element.getAttribute("data-buffer-type") ?? "",
                isHost: element.getAttribute("data-is-host") === "true",
                measuredWeights: number("data-measured-weights"),
                plannedWeights: number("data-planned-weights"),
                measuredKv: number("data-measured-kv"),
                measuredScratch: number("data-measured-scratch"),
                plannedAs: element.getAttribute("data-planned-as") || null,
                device: element.closest("[data-testid='memory-device']")?.getAttribute("data-device") ?? ""
            };
        }));
    }

    async devices(): Promise<MemoryDevice[]> {
        await this.page.getByTestId("memory-device").first().waitFor();
        return await this.page.getByTestId("memory-device").evaluateAll((elements) => elements.map((element) => {
            const number = (name: string) => {
                const value = element.getAttribute(name);
                return value == null || value === "" ? null : Number(value);
            };
            const texts = (selector: string) => [...element.querySelectorAll(selector)].map((node) => node.textContent?.trim() ?? "");
            return {
                device: element.getAttribute("data-device") ?? "", kind: element.getAttribute("data-kind"),
                total: number("data-total"), free: number("data-free"), budget: number("data-budget"),
                plannedWeights: number("data-planned-weights"), plannedKv: number("data-planned-kv"), plannedScratch: number("data-planned-scratch"),
                measuredWeights: number("data-measured-weights"), measuredKv: number("data-measured-kv"), measuredScratch: number("data-measured-scratch"),
                budgetMarker: element.querySelector("[data-testid='marker-budget']") != null,
                plannedMarker: element.querySelector("[data-testid='marker-planned']") != null,
                segments: [...element.querySelectorAll(".capacity-segment")].map((node) => node.getAttribute("title") ?? ""),
                columns: texts(".memory-table thead th"),
                rowLabels: texts(".memory-table tbody th"),
                notes: texts("[data-testid='memory-notes'] li")
            };
        }));
    }

    /** How many times system RAM is shown. */
    async ramCount(): Promise<number> {
        return await this.page.locator("[data-testid='memory-device'][data-device='CPU']").count();
    }
}
