import type {Page} from "playwright-core";

/** The Model screen: drop zone, file picker, path field, model card, tensor table. */
export class ModelPage {
    constructor(readonly page: Page) {}

    /**
     * Drags a file from disk onto the window, as a user would from a file manager. The File comes from a real file
     * chooser (so Electron's `webUtils.getPathForFile` sees its path), then rides a DataTransfer through
     * dragenter → dragover → drop on the window.
     */
    async dropFile(filePath: string): Promise<void> {
        const input = await this.page.evaluateHandle(() => {
            const element = document.createElement("input");
            element.type = "file";
            return element;
        });
        await input.setInputFiles(filePath);
        const dataTransfer = await this.page.evaluateHandle((element) => {
            const transfer = new DataTransfer();
            transfer.items.add(element.files![0]!);
            return transfer;
        }, input);
        for (const type of ["dragenter", "dragover", "drop"])
            await this.page.dispatchEvent("main", type, {dataTransfer});
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
