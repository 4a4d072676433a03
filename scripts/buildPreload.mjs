// The Electron preload runs sandboxed, where only CommonJS works: bundle it (with the contract's request names) into
// one .cjs file next to main.js. `electron` stays external (the sandbox provides it).
import {build} from "esbuild";

await build({
    entryPoints: ["electron/main/preload.ts"],
    outfile: "dist/electron/main/preload.cjs",
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    external: ["electron"],
    sourcemap: true,
    logLevel: "warning"
});
