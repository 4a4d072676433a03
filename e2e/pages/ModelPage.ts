import {readFile} from "node:fs/promises";
import path from "node:path";
import type {Page} from "playwright-core";

/** The Model screen: drop zone, file picker, path field, model card, tensor table. */
export class ModelPage {
    constructor(readonly page: Page) {}

    /** Drags a file from disk onto the window, as a user would from a file manager. */
    async dropFile(filePath: string): Promise<void> {
        const bytes = (await readFile(filePath)).toString("base64");
        const dataTransfer = await this.page.evaluateHandle(({name, base64}) => {
            const binary = atob(base64);
            const array = new Uint8Array(binary.length);
            for (let i = 0; i < binary.length; i++)
                array[i] = binary.charCodeAt(i);
            const transfer = new DataTransfer();
            transfer.items.add(new File([array], name, {type: "application/octet-stream"}));
            return transfer;
        }, {name: path.basename(filePath), base64: bytes});
        await this.page.dispatchEvent("main", "dragenter", {dataTransfer});
        await this.page.dispatchEvent("main", "dragover", {dataTransfer});
        await this.page.dispatchEvent("main", "drop", {dataTransfer});
    }

    async openPath(modelPath: string): Promise<void> {
        await this.page.getByTestId("model-path").fill(modelPath);
        await this.page.getByTestId("open-path").click();
    }

    get card() {
        return this.page.getByTestId("model-card");
    }

    get error() {
        return this.page.getByTestId("model-error");
    }

    async architecture(): Promise<string> {
        return (await this.page.getByTestId("model-architecture").textContent()) ?? "";
    }

    async tensorRowCount(): Promise<number> {
        return await this.page.getByTestId("tensor-row").count();
    }

    async filterTensors(text: string): Promise<void> {
        await this.page.getByTestId("tensor-filter").fill(text);
    }
}
