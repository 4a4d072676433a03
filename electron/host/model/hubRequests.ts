/**
 * "Get a model": a demo model with random weights, or one from the hub: search the hub (`HF_ENDPOINT`, `HF_TOKEN` as the CLI reads them), list a repository's quants with
 * each one's plan on this machine (in the engine, which holds llama.cpp), and download one into the app's models
 * folder (here in the host: a download needs no engine), then open it as a dropped file is opened.
 */
import {promises as fs} from "node:fs";
import path from "node:path";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {PRIVATE_DIR_MODE} from "../storage/privateDataDir.js";
import {groupGgufQuants, pickQuant} from "../../engine/hub/ggufQuants.js";
import {hubAccessFromEnv} from "../../engine/hub/hubAccess.js";
import {listRepoFiles} from "../../engine/hub/listRepoFiles.js";
import {PARTIAL_DIR, pullModel} from "../../engine/hub/pullModel.js";
import {searchModels} from "../../engine/hub/searchModels.js";
import type {HostContext, RequestHandlers} from "../HostContext.js";

type HubRequestName = "hub.search" | "hub.quants" | "hub.pull" | "model.makeDemo";

/** The demo model's file in the models folder; the name says what it is. */
export const DEMO_MODEL_FILE = "demo-random-weights.gguf";

/** The app pulls from a repository's `main` revision. */
const REVISION = "main";

export function hubRequests(host: HostContext): RequestHandlers<HubRequestName> {
    return {
        "model.makeDemo": async () => {
            const file = path.join(host.access.ownFolder, DEMO_MODEL_FILE);
            if (!(await fs.stat(file).then((stat) => stat.isFile(), () => false))) {
                await fs.mkdir(host.access.ownFolder, {recursive: true, mode: PRIVATE_DIR_MODE});
                // written beside, then renamed: a crash mid-write leaves no half demo model
                const temp = path.join(host.access.ownFolder, PARTIAL_DIR, `${DEMO_MODEL_FILE}.partial`);
                await fs.mkdir(path.dirname(temp), {recursive: true, mode: PRIVATE_DIR_MODE});
                await makeSyntheticModel(temp, {preset: "tiny", type: "f16"});
                await fs.rename(temp, file);
            }
            const card = await host.engine.request("inspect", {path: file});
            await host.library.opened(card).catch(() => {});
            return card;
        },
        "hub.search": async (arg) => await searchModels(hubAccessFromEnv(), arg.query),
        "hub.quants": async (arg) => await host.engine.request("hubQuants", arg),
        "hub.pull": async (arg, client) => {
            if (host.hostTasks.has(arg.taskId))
                throw new TensorwiseError("bad-request", `task ${arg.taskId} is already running`);
            const controller = new AbortController();
            host.hostTasks.set(arg.taskId, controller);
            try {
                const access = hubAccessFromEnv();
                const quant = pickQuant(groupGgufQuants(await listRepoFiles(access, arg.repo, REVISION, {signal: controller.signal})), arg.quant, arg.repo);
                if (quant.files.length > 1)
                    throw new TensorwiseError("hub-error", `${arg.repo}:${quant.name} is a split model (${quant.files.length} files); the app opens one-file models. ` +
                        `Download it with \`tensorwise pull ${arg.repo}:${quant.name}\` and open its first part.`);
                const [file] = await pullModel(quant, {
                    access, repo: arg.repo, revision: REVISION, modelsDir: host.access.ownFolder, signal: controller.signal,
                    onProgress: (name, p) => client.emit("task.progress", {
                        taskId: arg.taskId, step: "download", progress: p.totalBytes > 0 ? p.doneBytes / p.totalBytes : null,
                        detail: `${name}: ${p.secondsLeft == null ? "starting" : `${Math.ceil(p.secondsLeft)} s left`}`
                    })
                });
                const card = await host.engine.request("inspect", {path: file!.path});
                await host.library.opened(card).catch(() => {});
                return card;
            } catch (error) {
                if (controller.signal.aborted)
                    throw new TensorwiseError("aborted", "The download was cancelled; what came is kept, and downloading again resumes it.");
                throw error;
            } finally {
                host.hostTasks.delete(arg.taskId);
            }
        }
    };
}
