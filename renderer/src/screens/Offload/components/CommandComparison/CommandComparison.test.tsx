// @vitest-environment jsdom
// The user's llama.cpp command beside the plan: both predictions, whether it fits, what it places otherwise and what
// that costs, the knobs that differ — or, when it cannot be priced, every refused flag with why.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import type {CommandComparisonView} from "../../../../../../electron/contract/llamaCommand";
import {CommandComparison} from "./CommandComparison";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

let container: HTMLDivElement;
let root: Root;
beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
});

const MiB = 2 ** 20;
const view = (extra: Partial<CommandComparisonView>): CommandComparisonView => ({
    line: "llama-server -ngl 99 --cpu-moe -fa on --port 8080", program: "llama-server", loaded: "plan",
    notPriced: [{flag: "--port", why: "changes neither placement nor speed as priced here"}], refused: [],
    priced: {fits: false, reason: "over", gpuLayers: 49, overrideCount: 1, ttftMs: 1800, tpotMs: 40, vramBytes: 9000 * MiB, notes: ["-fa on"]},
    plan: {ttftMs: 1000, tpotMs: 50, vramBytes: 7000 * MiB}, overshootBytes: 1024 * MiB,
    differences: [{what: "ffn_up_exps × 12 (blk.0–11)", bytes: 600 * MiB, command: "CPU", plan: "GPU", requestMsDelta: 420}],
    knobDifferences: ["micro-batch: 512 in the command, 1024 in the plan"], ...extra
});

const text = (id: string) => container.querySelector(`[data-testid=${id}]`)?.textContent ?? null;

describe("CommandComparison", () => {
    it("sets the command's predictions beside the plan's and says it does not fit, by how much", () => {
        act(() => root.render(<CommandComparison view={view({})}/>));
        expect(text("command-ttft")).toContain("1.80× slower");
        expect(text("command-tpot")).toContain("1.25× faster");
        expect(text("command-vram")).toMatch(/does not fit: 1(\.00?)? GiB over/);
        expect(text("command-differences")).toContain("ffn_up_exps × 12 (blk.0–11)");
        expect(text("command-differences")).toMatch(/costs 420 ms a request/);
        expect(text("command-differences")).toContain("micro-batch: 512 in the command, 1024 in the plan");
        expect(text("command-not-priced")).toContain("--port");
    });

    it("names every refused flag with why, and prices nothing", () => {
        act(() => root.render(<CommandComparison view={view({priced: null, refused: [{flag: "-ts", why: "a split over several GPUs"}, {flag: "--no-mmap", why: "spelled --load-mode none"}]})}/>));
        expect(text("command-refused")).toContain("-ts: a split over several GPUs");
        expect(text("command-refused")).toContain("--no-mmap: spelled --load-mode none");
        expect(container.querySelector("[data-testid=command-ttft]")).toBeNull();
    });

    it("says so when the command is the plan", () => {
        act(() => root.render(<CommandComparison view={view({differences: [], knobDifferences: [], priced: {...view({}).priced!, fits: true}, overshootBytes: 0})}/>));
        expect(text("command-same")).toBe("The same placement and knobs as the plan.");
        expect(text("command-vram")).toContain("fits");
    });
});
