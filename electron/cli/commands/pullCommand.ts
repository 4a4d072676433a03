import path from "node:path";
import {progressLines, type CliIo} from "../CliIo.js";
import {UsageError} from "../UsageError.js";
import {defaultDataDir, modelsDirOf} from "../../host/storage/dataDir.js";
import {LIBRARY_FILE, ModelLibrary} from "../../host/model/ModelLibrary.js";
import {inspectGguf} from "../../engine/gguf/inspectGguf.js";
import {validateGgufOutOfProcess} from "../../engine/gguf/validateGgufOutOfProcess.js";
import {toModelCard} from "../../engineProcess/modelCard.js";
import {getEngineLlama, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import type {DownloadProgress} from "../../engine/hub/downloadFile.js";
import {pullModel} from "../../engine/hub/pullModel.js";
import {groupGgufQuants, pickQuant, type GgufQuant} from "../../engine/hub/ggufQuants.js";
import {hubAccessFromEnv} from "../../engine/hub/hubAccess.js";
import {HubError} from "../../engine/hub/HubError.js";
import {listRepoFiles, type RepoFile} from "../../engine/hub/listRepoFiles.js";
import {checkRevision, parsePullTarget, type PullTarget} from "../../engine/hub/pullTarget.js";
import {planRemoteQuants, type QuantListing} from "../../engine/hub/planRemoteQuants.js";
import {DEFAULT_WORKLOAD} from "../../engine/planner/types.js";
import {formatBytes, formatMs, formatTable} from "../../engine/format/formatBytes.js";


/** Options of {@link pullCommand}. */
export type PullCommandOptions = {
    readonly dir: string | null;
    readonly revision: string | null;
    readonly list: boolean;
    readonly profile: boolean;
    readonly stallMs: number;
    readonly gpu: EngineGpu;
    readonly json: boolean;
};

/** `tensorwise pull <owner/name[:QUANT]|URL> [--list [--profile]] [--dir D] [--revision R] [--timeout S] [--json]`. */
export async function pullCommand(io: CliIo, targetText: string, options: PullCommandOptions): Promise<number> {
    const target = parsePullTarget(targetText, hubAccessFromEnv());
    if (options.revision != null && target.revision != null && options.revision !== target.revision)
        throw new UsageError(`--revision ${options.revision} differs from the URL's revision ${target.revision}: give one`);
    const revision = checkRevision(options.revision ?? target.revision ?? "main");
    if (options.profile && !options.list)
        throw new UsageError("--profile only applies to --list (it measures this machine to plan quants before a download)");
    const controller = new AbortController();
    const onInterrupt = (): void => controller.abort(new HubError("cancelled"));
    process.once("SIGINT", onInterrupt);
    try {
        const files = await listRepoFiles(target.access, target.repo, revision, {stallMs: options.stallMs, signal: controller.signal});
        const quants = groupGgufQuants(files);
        if (options.list)
            return await listQuants(io, target, revision, target.quant == null && target.file == null ? quants : [chosen(target, quants, files)], options, controller.signal);
        return await pull(io, target, revision, chosen(target, quants, files), options, controller.signal);
    } catch (error) {
        if (controller.signal.aborted) {
            io.err("cancelled: what was downloaded is kept; run the same command again to resume.");
            return 130;
        }
        throw error;
    } finally {
        process.removeListener("SIGINT", onInterrupt);
    }
}

function chosen(target: PullTarget, quants: readonly GgufQuant[], files: readonly RepoFile[]): GgufQuant {
    if (target.file == null) return pickQuant(quants, target.quant, target.repo);
    const quant = quants.find((q) => q.files.some((f) => f.path === target.file));
    if (quant != null) return quant;
    if (!files.some((f) => f.path === target.file))
        throw new HubError(`${target.repo} has no file ${target.file} at this revision.`);
    throw new HubError(`${target.file} is not a model tensorwise can pull (a multimodal projector, or a part of an incomplete split model).`);
}

async function pull(io: CliIo, target: PullTarget, revision: string, quant: GgufQuant, options: PullCommandOptions, signal: AbortSignal): Promise<number> {
    const dataDir = defaultDataDir();
    const modelsDir = options.dir != null ? path.resolve(options.dir) : modelsDirOf(dataDir);
    const progress = progressLines(io);
    const saved = await pullModel(quant, {
        access: target.access, repo: target.repo, revision, modelsDir, stallMs: options.stallMs, signal,
        onProgress: options.json ? undefined : (name, p) => progress(progressSentence(name, p))
    });
    const first = saved[0]!.path;
    let registered = false;
    if (quant.files.length === 1) {
        const model = inspectGguf(await validateGgufOutOfProcess(first, {timeoutMs: 30_000}));
        await new ModelLibrary(path.join(dataDir, LIBRARY_FILE)).opened(toModelCard(first, model));
        registered = true;
    }
    if (options.json) {
        io.out(JSON.stringify({repo: target.repo, revision, quant: quant.name, files: saved, registered, modelsDir}, null, 2));
        return 0;
    }
    for (const s of saved)
        io.out(s.existed
            ? `${s.path}: already here (${formatBytes(s.bytes)}, same size${s.sha256 != null ? " and sha256" : ""})`
            : `${s.path}: ${formatBytes(s.bytes)}${s.resumedFromBytes > 0 ? `, resumed at ${formatBytes(s.resumedFromBytes)}` : ""}, ` +
                `${s.sha256 != null ? "sha256 verified" : "size verified (the repository lists no sha256)"}`);
    io.out(registered
        ? `${quant.name} is in the app's model library${options.dir != null ? `; in web mode open it with --model-dir ${modelsDir}` : ""}.`
        : `a split model: llama.cpp loads it from ${first}; tensorwise's library checks one file at a time, so it is not listed in the app yet.`);
    return 0;
}

function progressSentence(name: string, p: DownloadProgress): string {
    const percent = p.totalBytes > 0 ? (100 * p.doneBytes / p.totalBytes).toFixed(0) : "100";
    const rate = p.bytesPerSecond == null ? "" : `, ${formatBytes(p.bytesPerSecond)}/s`;
    const left = p.secondsLeft == null ? "" : `, ${formatSeconds(p.secondsLeft)} left`;
    return `downloading ${name}: ${formatBytes(p.doneBytes)} of ${formatBytes(p.totalBytes)} (${percent}%)${rate}${left}`;
}

async function listQuants(io: CliIo, target: PullTarget, revision: string, quants: readonly GgufQuant[], options: PullCommandOptions, signal: AbortSignal): Promise<number> {
    if (quants.length === 0) throw new HubError(`${target.repo} has no GGUF model files.`);
    const engine = await getEngineLlama({gpu: options.gpu});
    let listings: QuantListing[];
    try {
        listings = await planRemoteQuants(engine, quants, {
            access: target.access, repo: target.repo, revision, profile: options.profile, stallMs: options.stallMs, signal,
            onProgress: options.json ? undefined : progressLines(io)
        });
    } finally {
        await engine.llama.dispose();
    }
    if (options.json) {
        io.out(JSON.stringify({repo: target.repo, revision, workload: DEFAULT_WORKLOAD, quants: listings.map((l) => ({
            name: l.quant.name, files: l.quant.files.map((f) => f.path), bytes: l.quant.bytes, headerBytes: l.headerBytes,
            plan: l.plan, notPlanned: l.notPlanned, needsProfile: l.needsProfile
        }))}, null, 2));
        return 0;
    }
    io.out(`${target.repo} (revision ${revision}): ${listings.length} model${listings.length === 1 ? "" : "s"}, planned on this machine from each file's header ` +
        `for a ${DEFAULT_WORKLOAD.promptTokens}-token prompt and a ${DEFAULT_WORKLOAD.genTokens}-token reply, fastest that fits first:`);
    const rows: string[][] = [["  quant", "size", "where", "TTFT", "tokens/s", "GPU memory", "RAM"]];
    const unplanned: string[] = [];
    for (const l of listings) {
        const p = l.plan;
        if (p == null) {
            unplanned.push(`  ${l.quant.name} (${formatBytes(l.quant.bytes)}): not planned: ${l.notPlanned}`);
            continue;
        }
        // with the range this machine's measured prediction errors give (predictionErrors.ts)
        const ttft = p.ranges == null ? formatMs(p.ttftMs) : `${formatMs(p.ttftMs)} (${formatMs(p.ranges.ttft.lowMs)}–${formatMs(p.ranges.ttft.highMs)})`;
        const rate = p.ranges == null ? p.tokensPerSecond.toFixed(1)
            : `${p.tokensPerSecond.toFixed(1)} (${(1000 / p.ranges.tpot.highMs).toFixed(1)}–${(1000 / p.ranges.tpot.lowMs).toFixed(1)})`;
        rows.push([`  ${l.quant.name}`, formatBytes(l.quant.bytes), p.placement, ttft, rate,
            p.gpuName == null ? "-" : formatBytes(p.gpuBytes), `${formatBytes(p.hostBytes)}${p.fitsRam ? "" : " (more than is free)"}`]);
    }
    if (rows.length > 1) io.out(formatTable(rows));
    for (const line of unplanned) io.out(line);
    if (listings.some((l) => l.needsProfile))
        io.out(`no profile of this machine is cached for some quants' operators: run \`tensorwise pull ${target.repo} --list --profile\` to measure them ` +
            "(about 20 s per quant type), then the list shows their speed.");
    io.out(`download one with \`tensorwise pull ${target.repo}:QUANT\`.`);
    return 0;
}

function formatSeconds(seconds: number): string {
    if (seconds < 60) return `${Math.ceil(seconds)} s`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
    return `${Math.floor(seconds / 3600)} h ${Math.ceil((seconds % 3600) / 60)} min`;
}
