/** The Electron binary, when one is installed and runs (never on the machines that cannot download it). */
import {spawnSync} from "node:child_process";
import {existsSync} from "node:fs";
import {createRequire} from "node:module";

export function findElectron(): {path: string} | {reason: string} {
    let binary: unknown;
    try {
        binary = createRequire(import.meta.url)("electron");
    } catch (error) {
        return {reason: `the electron package has no binary (${String((error as Error).message).split("\n")[0]})`};
    }
    if (typeof binary !== "string" || !existsSync(binary))
        return {reason: "the electron package is installed without its binary (`npm run electron:install` downloads it)"};
    const probe = spawnSync(binary, ["--version"], {env: {...process.env, ELECTRON_RUN_AS_NODE: "1"}, timeout: 15_000, encoding: "utf8"});
    if (probe.status !== 0)
        return {reason: `the Electron binary at ${binary} does not run`};
    return {path: binary};
}
