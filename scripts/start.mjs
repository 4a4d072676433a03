// `npm start`: the Electron window when an Electron binary is installed and runs; otherwise web mode on 127.0.0.1
// (same UI, same engine), printing the URL with its launch token. Extra arguments go to web mode (--port, --data-dir).
import {spawn, spawnSync} from "node:child_process";
import {existsSync} from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {fileURLToPath} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/** The Electron binary's path, or why there is none. */
function findElectron() {
    let binary;
    try {
        binary = require("electron");
    } catch (error) {
        return {reason: `the electron package has no binary (${String(error.message).split("\n")[0]})`};
    }
    if (typeof binary !== "string" || !existsSync(binary))
        return {reason: "the electron package is installed without its binary"};
    const probe = spawnSync(binary, ["--version"], {env: {...process.env, ELECTRON_RUN_AS_NODE: "1"}, timeout: 15_000, encoding: "utf8"});
    if (probe.status !== 0)
        return {reason: `the Electron binary at ${binary} does not run (${(probe.stderr || probe.error?.message || "").trim().split("\n")[0]})`};
    return {binary};
}

for (const file of ["dist/electron/main/main.js", "dist/electron/web/webMain.js", "dist/renderer/index.html"])
    if (!existsSync(path.join(root, file))) {
        console.error(`${file} is missing: run \`npm run build\` first.`);
        process.exit(1);
    }

const electron = process.env.TENSORWISE_WEB === "1" ? {reason: "TENSORWISE_WEB=1"} : findElectron();
if (electron.binary != null) {
    const child = spawn(electron.binary, [root], {stdio: "inherit", env: {...process.env, ELECTRON_RUN_AS_NODE: undefined}});
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("exit", (code, signal) => process.exit(code ?? (signal != null ? 1 : 0)));
} else {
    console.log(`No Electron binary available: ${electron.reason}.`);
    console.log("(On a machine with internet access, `npm run electron:install` downloads it.) Starting web mode instead.");
    await import(path.join(root, "dist/electron/web/webMain.js"));
}
