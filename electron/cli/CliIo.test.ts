import {describe, expect, it} from "vitest";
import {progressLines, type CliIo} from "./CliIo.js";

function collecting(): CliIo & {lines: string[]} {
    const lines: string[] = [];
    return {lines, out: () => undefined, err: (line) => lines.push(line)};
}

describe("progress on stderr", () => {
    const ticks = [
        "profile: measuring CPU · about 20 s left", "profile: measuring CPU · about 19 s left", "profile: measuring CPU · about 19 s left",
        "profile: measuring CPU, Vulkan0 · about 12 s left", "profile: done in 21.3 s", "plan: optimal at 512 MiB"
    ];

    it("in a log file, a countdown prints once per step, not once per tick", () => {
        const io = collecting();
        const print = progressLines(io, false);
        for (const tick of ticks) print(tick);
        expect(io.lines).toEqual([ticks[0], ticks[3], ticks[4], ticks[5]]);
    });

    it("on a terminal, every tick is printed", () => {
        const io = collecting();
        const print = progressLines(io, true);
        for (const tick of ticks) print(tick);
        expect(io.lines).toEqual(ticks);
    });
});
