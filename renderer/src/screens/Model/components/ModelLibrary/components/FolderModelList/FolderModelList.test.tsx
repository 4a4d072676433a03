// @vitest-environment jsdom
// The models folders in the library: what the host pushes when a folder changes is shown, an odd file name is shown as
// text (never markup), and Open opens the file where it is.
import {act} from "react";
import {createRoot} from "react-dom/client";
import {beforeAll, describe, expect, it} from "vitest";
import type {FolderModels} from "../../../../../../../../electron/contract/ipc";
import {wireEvents} from "../../../../../../actions/wireEvents";
import {fakeBridge} from "../../../../../../testing/fakeBridge";
import {getTransport, initTransport} from "../../../../../../transport/getTransport";
import {FolderModelList} from "./FolderModelList";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const odd = "<img src=x onerror=alert(1)>.gguf";

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    wireEvents(getTransport());
});

describe("the models folders in the library", () => {
    it("shows what the host pushes, odd names as text, and opens a file in place", async () => {
        const container = document.createElement("div");
        document.body.append(container);
        const root = createRoot(container);
        await act(async () => root.render(<FolderModelList/>));
        expect(container.querySelectorAll("[data-testid=folder-model]")).toHaveLength(0);

        const pushed: FolderModels = {
            models: [{path: `/data/models/${odd}`, fileName: odd, folder: "/data/models", fileBytes: 3 * 2 ** 30, lastUsedAt: null}],
            notices: ["The models folder /mnt/usb/models is not there (moved, deleted or unmounted); its models are listed again once it is back."]
        };
        await act(async () => fake.emit("library.files", pushed));
        const item = container.querySelector("[data-testid=folder-model]")!;
        expect(item.querySelector("b")!.textContent).toBe(odd);
        expect(container.querySelector("img")).toBeNull();
        expect(item.textContent).toContain("never opened");
        expect(container.querySelector("[data-testid=folder-notice]")!.textContent).toMatch(/\/mnt\/usb\/models is not there/);

        const asked: string[] = [];
        fake.handle("model.inspect", (arg) => {
            asked.push(arg.path);
            return new Promise(() => {});
        });
        await act(async () => (item.querySelector("[data-testid=folder-model-open]") as HTMLButtonElement).click());
        expect(asked).toEqual([`/data/models/${odd}`]);
        await act(async () => root.unmount());
    });
});
