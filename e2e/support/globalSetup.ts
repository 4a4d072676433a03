/**
 * The e2e suite runs the built app: make sure dist/ (engine, host, web server) and dist/renderer exist. Also makes the
 * run's shared cache folder ({@link SHARED_CACHE_ENV}; webApp.ts), removed when the run ends.
 */
import {execFileSync} from "node:child_process";
import {existsSync, mkdtempSync, rmSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {repoRoot} from "./paths.js";
import {SHARED_CACHE_ENV} from "./sharedCache.js";

export default function setup(): () => void {
    const shared = mkdtempSync(path.join(os.tmpdir(), "tensorwise-e2e-cache-"));
    // the spec files run in processes forked after this: they inherit it
    process.env[SHARED_CACHE_ENV] = shared;
    const needed = ["dist/electron/web/webMain.js", "dist/electron/engineProcess/engineMain.js", "dist/renderer/index.html"];
    const missing = needed.filter((file) => !existsSync(path.join(repoRoot, file)));
    if (missing.length > 0 || process.env.TENSORWISE_E2E_BUILD === "1") {
        console.log(`building the app for e2e (${missing.length > 0 ? `missing ${missing.join(", ")}` : "TENSORWISE_E2E_BUILD=1"})`);
        execFileSync("npm", ["run", "build"], {cwd: repoRoot, stdio: "inherit"});
    }
    return () => rmSync(shared, {recursive: true, force: true});
}
