import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        include: ["electron/**/*.test.ts", "renderer/**/*.test.ts", "renderer/**/*.test.tsx"],
        testTimeout: 120_000,
        hookTimeout: 120_000,
        // Native model loads are memory- and thread-heavy; one file at a time on a 2-core machine.
        fileParallelism: false,
        reporters: ["default"]
    }
});
