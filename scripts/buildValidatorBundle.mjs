// The GGUF validator's isolated entry as one self-contained ES module, for a packaged app: it is unpacked from
// app.asar (package.json build.asarUnpack), because neither a forked Node nor a worker thread reads inside the archive,
// and one `.mjs` file needs no neighbouring modules or package.json there. electron/engine/gguf/validateGgufOutOfProcess.ts
// prefers it when present.
import {build} from "esbuild";

await build({
    entryPoints: ["electron/engine/gguf/validate/validateGgufChild.ts"],
    outfile: "dist/electron/engine/gguf/validate/validateGgufChild.bundle.mjs",
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning"
});
