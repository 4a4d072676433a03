/**
 * Web mode entry: the engine host and the renderer on 127.0.0.1, for machines without an Electron binary (and for
 * e2e tests in Chromium). Prints the URL with its per-launch token; serves until Ctrl-C.
 *
 * Usage: node dist/electron/web/webMain.js [--data-dir DIR] [--port N] [--model-dir DIR]… [--allow-any-path] [--max-upload-mib N]
 * Models open only from `<data dir>/models` and the `--model-dir` folders (a request is only as trustworthy as the
 * page that sent it), unless `--allow-any-path` is given.
 * Env: TENSORWISE_DATA_DIR (default ~/.tensorwise); the engine's own env (TENSORWISE_GPU, TENSORWISE_THREADS,
 * GGML_VK_VISIBLE_DEVICES) passes through.
 */
import path from "node:path";
import {fileURLToPath} from "node:url";
import {parseArgs} from "node:util";
import {startHost} from "../host/startHost.js";
import {withinLimit} from "../contract/limits.js";
import {serveWeb} from "./serveWeb.js";
import {defaultDataDir, modelsDirOf} from "../host/storage/dataDir.js";

const {values} = parseArgs({
    options: {
        "data-dir": {type: "string"}, port: {type: "string"}, "renderer-dir": {type: "string"},
        "model-dir": {type: "string", multiple: true}, "allow-any-path": {type: "boolean", default: false},
        "max-upload-mib": {type: "string"}
    },
    strict: true
});
const dataDir = values["data-dir"] != null ? path.resolve(values["data-dir"]) : defaultDataDir();
const rendererDir = values["renderer-dir"] ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../renderer");

const modelAccess = {
    folders: [modelsDirOf(dataDir), ...(values["model-dir"] ?? []).map((folder) => path.resolve(folder))],
    anyPath: values["allow-any-path"] === true
};
const host = await startHost({dataDir, modelAccess, onEngineLog: (stream, line) => process.stderr.write(`[engine ${stream}] ${line}\n`)});
const maxUploadMiB = values["max-upload-mib"];
if (maxUploadMiB != null && !withinLimit("budgetMiB", Number(maxUploadMiB))) {
    process.stderr.write(`--max-upload-mib must be a size in MiB (got "${maxUploadMiB.slice(0, 40)}")\n`);
    process.exit(2);
}
const port = values.port == null ? 0 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write(`--port must be an integer from 0 to 65535 (got "${String(values.port).slice(0, 40)}")\n`);
    process.exit(2);
}
const server = await serveWeb({
    host: host.service, rendererDir, dataDir, port,
    // by default an upload may use the free disk space less a reserve (receiveUpload.ts); --max-upload-mib caps it
    // a dropped file that is already in a --model-dir opens there instead of being copied
    upload: {modelDirs: modelAccess.folders.slice(1), ...(maxUploadMiB != null && {maxBytes: Number(maxUploadMiB) * 2 ** 20})}
});

process.stdout.write(`No Electron window here: tensorwise is serving web mode.\nOpen ${server.url}\n`);
process.stdout.write(`data dir: ${dataDir}\n`);
for (const notice of host.store.notices())
    process.stdout.write(`${notice.message}\n`);
process.stdout.write(modelAccess.anyPath ? "models: any path may be opened (--allow-any-path)\n" : `models open from: ${modelAccess.folders.join(", ")}\n`);

/** Longest a shutdown may take (the engine's own stop escalates to SIGKILL within 5 s) before the host exits anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;
let closing = false;
/**
 * Ctrl-C (SIGINT, which the engine child ignores: see engineMain.ts) or SIGTERM: closes the server, then the engine
 * cleanly (its server and KV files are cleaned up), then exits. A second signal exits at once; the engine child then
 * sees its channel close and exits by itself.
 */
function shutdown(signal: NodeJS.Signals): void {
    if (closing) {
        process.exit(130);
    }
    closing = true;
    process.stdout.write(`\n${signal}: stopping…\n`);
    setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS).unref();
    void server.close()
        .then(() => host.dispose())
        .then(() => process.exit(0), (error: unknown) => {
            process.stderr.write(`stopping failed: ${error instanceof Error ? error.message : String(error)}\n`);
            process.exit(1);
        });
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
