import {readdirSync, readFileSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {defineConfig} from "vitest/config";

const root = path.dirname(fileURLToPath(import.meta.url));
const INCLUDE = ["electron/**/*.test.ts", "renderer/**/*.test.ts", "renderer/**/*.test.tsx"];

/**
 * Test files that load the native engine, start processes or servers, or time something: they run one at a time
 * (native model loads are memory- and thread-heavy on a 2-core machine, and a timed test must not share the CPU). A
 * file is one by its name (`*.cpu.test.ts`, `*.vulkan.test.ts`) or by what it imports or calls.
 */
const SEQUENTIAL_SOURCE = /probeEngine|getEngineLlama|makeTestModel|testModels|requiredOrSkip|child_process|worker_threads|new Worker|serveWeb|HostService|EngineClient|McpConnection|freePort|\.listen\(|performance\.now|Date\.now/;

function testFiles(dir: string): string[] {
    return readdirSync(path.join(root, dir), {recursive: true, encoding: "utf8"})
        .filter((file) => /\.test\.tsx?$/.test(file) && !file.includes("node_modules"))
        .map((file) => path.join(dir, file).split(path.sep).join("/"));
}

const sequential = [...testFiles("electron"), ...testFiles("renderer")].filter((file) =>
    /\.(cpu|vulkan)\.test\.tsx?$/.test(file) || SEQUENTIAL_SOURCE.test(readFileSync(path.join(root, file), "utf8")));

export default defineConfig({
    test: {
        testTimeout: 120_000,
        hookTimeout: 120_000,
        reporters: ["default"],
        env: {
            // Mesa's software Vulkan device (llvmpipe) is a CPU-type device that ggml skips unless it is made visible.
            GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0"
        },
        // One file at a time unless told otherwise: native model loads are memory- and thread-heavy on a 2-core machine.
        fileParallelism: false,
        // `npm run test:unit` runs the pure tests (planner arithmetic, parsers, renderer components) two files at a time
        // first — most of their time is each file's own start, which two workers halve — then the rest one at a time.
        projects: [
            {extends: true, test: {name: "pure", include: INCLUDE, exclude: sequential}},
            {extends: true, test: {name: "engine", include: sequential}}
        ]
    }
});
