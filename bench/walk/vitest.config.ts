import {fileURLToPath} from "node:url";
import {defineConfig} from "vitest/config";

/** The newcomer walk (`npm run walk`): a timed measurement of the built app in Chromium, run alone, not part of `npm test`. */
export default defineConfig({
    test: {
        root: fileURLToPath(new URL("../..", import.meta.url)),
        include: ["bench/walk/**/*.walk.ts"],
        testTimeout: 3_600_000,
        hookTimeout: 300_000,
        fileParallelism: false,
        globalSetup: ["e2e/support/globalSetup.ts"],
        reporters: ["default"]
    }
});
