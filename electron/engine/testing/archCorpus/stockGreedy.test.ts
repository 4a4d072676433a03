import {describe, expect, it} from "vitest";
import {renderOverrideFlags} from "../../placement/llamaCppFlags.js";
import {splitShellWords, stockGreedyArgs} from "./stockGreedy.js";

describe("stock greedy-tokens arguments from tensorwise's llama.cpp line", () => {
    it("splits what llamaCppFlags.ts quotes back into the exact words, regex escapes and quotes included", () => {
        const overrides = [{pattern: "^blk\\.0\\.ffn_(?:up|down)\\.weight$", bufferType: "Vulkan0"}, {pattern: "^it's$", bufferType: "CPU"}];
        const command = renderOverrideFlags(overrides, {modelPath: "/tmp/a model.gguf", ubatch: 512, threads: 1});
        expect(splitShellWords(command.command)).toEqual(["llama-cli", ...command.argv]);
        expect(splitShellWords(`a "b \\"c\\"" d\\ e`)).toEqual(["a", "b \"c\"", "d e"]);
        expect(() => splitShellWords("a 'b")).toThrow(/unterminated/);
    });

    it("puts tensorwise's hidden settings first so the line's own flags win, and sets the logical batch to the micro-batch", () => {
        const args = stockGreedyArgs({llamaCppFlags: "llama-cli -m /m.gguf -ngl 999 -ot '^x$=CPU' -ub 256 -t 1 --load-mode none",
            promptIds: [5, 6, 7], maxTokens: 4, contextSize: 256});
        expect(args).toEqual(["--prompt-ids", "5,6,7", "-n", "4", "-c", "256", "-fa", "off", "-b", "256",
            "-m", "/m.gguf", "-ngl", "999", "-ot", "^x$=CPU", "-ub", "256", "-t", "1", "--load-mode", "none"]);
        // a line with its own -b keeps it
        expect(stockGreedyArgs({llamaCppFlags: "llama-cli -m m -b 4096 -ub 4096", promptIds: [1], maxTokens: 1, contextSize: 8}))
            .toEqual(["--prompt-ids", "1", "-n", "1", "-c", "8", "-fa", "off", "-m", "m", "-b", "4096", "-ub", "4096"]);
    });
});
