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
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {parseArgs} from "node:util";
import {startHost} from "../host/startHost.js";
import {withinLimit} from "../contract/limits.js";
import {serveWeb} from "./serveWeb.js";

const {values} = parseArgs({
    options: {
        "data-dir": {type: "string"}, port: {type: "string"}, "renderer-dir": {type: "string"},
        "model-dir": {type: "string", multiple: true}, "allow-any-path": {type: "boolean", default: false},
        "max-upload-mib": {type: "string"}
    },
    strict: true
});
const dataDir = path.resolve(values["data-dir"] ?? process.env.TENSORWISE_DATA_DIR ?? path.join(os.homedir(), ".tensorwise"));
const rendererDir = values["renderer-dir"] ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../renderer");

const modelAccess = {
    folders: [path.join(dataDir, "models"), ...(values["model-dir"] ?? []).map((folder) => path.resolve(folder))],
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
    upload: maxUploadMiB == null ? {} : {maxBytes: Number(maxUploadMiB) * 2 ** 20}
});

process.stdout.write(`No Electron window here: tensorwise is serving web mode.\nOpen ${server.url}\n`);
process.stdout.write(`data dir: ${dataDir}\n`);
for (const notice of host.store.notices())
    process.stdout.write(`${notice.message}\n`);
process.stdout.write(modelAccess.anyPath ? "models: any path may be opened (--allow-any-path)\n" : `models open from: ${modelAccess.folders.join(", ")}\n`);

let closing = false;
async function shutdown(): Promise<void> {
    if (closing)
        return;
    closing = true;
    process.stdout.write("\nstopping…\n");
    await server.close();
    await host.dispose();
    process.exit(0);
}
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
