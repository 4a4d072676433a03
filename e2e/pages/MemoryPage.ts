import type {Page} from "playwright-core";

export type MemoryRow = {bufferType: string; isHost: boolean; measuredWeights: number | null; plannedWeights: number | null; measuredKv: number | null; measuredScratch: number | null;
    plannedKv: number | null; plannedScratch: number | null};

/** The Memory screen: free memory per device, weights / KV / scratch per buffer type, planned vs measured. */
export class MemoryPage {
    constructor(readonly page: Page) {}

    async rows(): Promise<MemoryRow[]> {
        await this.page.getByTestId("memory-panel").waitFor();
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
                plannedKv: number("data-planned-kv"),
                plannedScratch: number("data-planned-scratch")
            };
        }));
    }

    async deviceCount(): Promise<number> {
        return await this.page.getByTestId("device-free").count();
    }
}
