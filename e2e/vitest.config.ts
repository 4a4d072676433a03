import {fileURLToPath} from "node:url";
import {defineConfig} from "vitest/config";

/** e2e: the built app (dist/) in Chromium (web mode) and, where a binary exists, in Electron. One file at a time. */
export default defineConfig({
    test: {
        root: fileURLToPath(new URL("..", import.meta.url)),
        include: ["e2e/specs/**/*.e2e.ts"],
        testTimeout: 180_000,
        hookTimeout: 120_000,
        fileParallelism: false,
        sequence: {concurrent: false},
        globalSetup: ["e2e/support/globalSetup.ts"],
        reporters: ["default"]
    }
});
