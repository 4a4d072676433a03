import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        include: ["electron/**/*.test.ts", "renderer/**/*.test.ts", "renderer/**/*.test.tsx"],
        testTimeout: 120_000,
        hookTimeout: 120_000,
        // Native model loads are memory- and thread-heavy; one file at a time on a 2-core machine.
        fileParallelism: false,
        reporters: ["default"],
        env: {
            // Mesa's software Vulkan device (llvmpipe) is a CPU-type device that ggml skips unless it is made visible.
            GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0"
        }
    }
});
