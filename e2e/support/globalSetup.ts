/** The e2e suite runs the built app: make sure dist/ (engine, host, web server) and dist/renderer exist. */
import {execFileSync} from "node:child_process";
import {existsSync} from "node:fs";
import path from "node:path";
import {repoRoot} from "./paths.js";

export default function setup(): void {
    const needed = ["dist/electron/web/webMain.js", "dist/electron/engineProcess/engineMain.js", "dist/renderer/index.html"];
    const missing = needed.filter((file) => !existsSync(path.join(repoRoot, file)));
    if (missing.length > 0 || process.env.TENSORWISE_E2E_BUILD === "1") {
        console.log(`building the app for e2e (${missing.length > 0 ? `missing ${missing.join(", ")}` : "TENSORWISE_E2E_BUILD=1"})`);
        execFileSync("npm", ["run", "build"], {cwd: repoRoot, stdio: "inherit"});
    }
}
