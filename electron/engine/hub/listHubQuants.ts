/** A repository's quants planned on this machine, in the contract's shape: what the app's "Get a model" screen lists. */
import type {HubQuantList} from "../../contract/hub.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {DEFAULT_WORKLOAD} from "../planner/types.js";
import {groupGgufQuants} from "./ggufQuants.js";
import {hubAccessFromEnv} from "./hubAccess.js";
import {HubError} from "./HubError.js";
import {listRepoFiles} from "./listRepoFiles.js";
import {planRemoteQuants} from "./planRemoteQuants.js";

/** Lists `repo` at `revision` on `HF_ENDPOINT` and plans each quant from its header ({@link planRemoteQuants}). */
export async function listHubQuants(engine: EngineLlama, request: {
    repo: string; revision: string; profile: boolean; signal?: AbortSignal; onProgress?: (message: string) => void;
}): Promise<HubQuantList> {
    const access = hubAccessFromEnv();
    const quants = groupGgufQuants(await listRepoFiles(access, request.repo, request.revision, {signal: request.signal}));
    if (quants.length === 0) throw new HubError(`${request.repo} has no GGUF model files.`);
    const listings = await planRemoteQuants(engine, quants, {
        access, repo: request.repo, revision: request.revision, profile: request.profile, signal: request.signal, onProgress: request.onProgress
    });
    return {
        repo: request.repo, revision: request.revision, workload: {...DEFAULT_WORKLOAD},
        quants: listings.map((l) => ({name: l.quant.name, files: l.quant.files.map((f) => f.path), bytes: l.quant.bytes,
            plan: l.plan, notPlanned: l.notPlanned, needsProfile: l.needsProfile}))
    };
}
