import {defineConfig} from "vite";

/** The renderer: React + zustand, built to dist/renderer (served by web mode, loaded by Electron over app://). */
export default defineConfig({
    root: "renderer",
    base: "./",
    // no @vitejs/plugin-react: esbuild's automatic JSX runtime is all the build needs (no dev-server fast refresh)
    esbuild: {jsx: "automatic"},
    build: {
        outDir: "../dist/renderer",
        emptyOutDir: true,
        target: "es2022",
        sourcemap: true,
        chunkSizeWarningLimit: 1024
    }
});
