#!/usr/bin/env node
// Soak test (not part of `npm test`): web mode on 127.0.0.1 with a generated model, driven through its API for a fixed
// time with a mix of chats, stops mid-reply, engine kills (SIGKILL) with restart, model reloads and hostile requests.
// Samples the server's and the engine's memory (VmRSS) and open file descriptors, and at the end checks that every
// reply the API reported as saved is on disk, every conversation file is valid JSON, and the server still answers.
// With --serve the app's OpenAI-compatible server is on as well, driven by several API clients and a hostile one
// (bench/drivers/soakServe.mjs); then the app's own chat must never be refused as busy, the KV state folders in the
// server's temp dir stay within their budget, and none is left once web mode has stopped.
//
//   npm run build && node bench/drivers/soak.mjs [--minutes 30] [--out bench/results/soak-<date>] [--seed 1] [--serve] [--heap] [--snapshots]
//
// Writes <out>/soak.json (every sample and event count) and <out>/soak.md (the summary). Loopback only; Linux (/proc).
// Every sample splits the server's RSS by kind of mapping (see rssByKind). With --heap the server runs under
// `--trace-gc`, so every sample also records the V8 heap left after the last full (mark-compact) collection — RSS that
// grows while that stays flat is native or allocator growth, not live objects. With --snapshots two heap snapshots
// (a quarter in, and at the end) are compared by constructor in <out>/heap-diff.md (a snapshot itself costs ~30 MiB
// of RSS, so RSS drift is only meaningful without it).
import {spawn} from "node:child_process";
import {existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync} from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {kvStateOnDisk, startServeTraffic} from "./soakServe.mjs";
import {fileURLToPath} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const {values} = parseScriptArgs(import.meta.url, {minutes: {type: "string", default: "30"}, out: {type: "string"}, seed: {type: "string", default: "1"},
    heap: {type: "boolean", default: false}, snapshots: {type: "boolean", default: false}, serve: {type: "boolean", default: false}});
const minutes = Number(values.minutes);
if (!(minutes > 0 && minutes <= 24 * 60))
    throw new Error("--minutes must be a number of minutes above 0");
const stamp = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `soak-${stamp}`));
const SAMPLE_MS = 10_000;

// a small deterministic PRNG, so a run can be repeated action for action
let state = Number(values.seed) >>> 0 || 1;
const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);

for (const file of ["dist/electron/web/webMain.js", "dist/electron/engine/writer/makeSyntheticModel.js"])
    if (!existsSync(path.join(root, file)))
        throw new Error(`${file} is missing: run \`npm run build\` first`);
const {makeSyntheticModel} = await import(path.join(root, "dist/electron/engine/writer/makeSyntheticModel.js"));

const dataDir = path.join(os.tmpdir(), `tensorwise-soak-${process.pid}`);
mkdirSync(path.join(dataDir, "models"), {recursive: true});
const modelPath = path.join(dataDir, "models", "soak.gguf");
// the server's own temp dir (TMPDIR), so the KV state folders it writes can be measured and checked for leftovers
const tmpDir = path.join(dataDir, "tmp");
mkdirSync(tmpDir, {recursive: true});
await makeSyntheticModel(modelPath, {preset: "tiny", name: "soak"});

// --- the server ---------------------------------------------------------------------------------------------
const heapDir = path.join(outDir, "heap");
if (values.snapshots)
    mkdirSync(heapDir, {recursive: true});
const heapFlags = [...(values.heap ? ["--trace-gc"] : []), ...(values.snapshots ? ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${heapDir}`] : [])];
const server = spawn(process.execPath, [...heapFlags, path.join(root, "dist/electron/web/webMain.js"), "--data-dir", dataDir], {
    cwd: root, env: {...process.env, TMPDIR: tmpDir, TENSORWISE_THREADS: process.env.TENSORWISE_THREADS ?? "2"}, stdio: ["ignore", "pipe", "pipe"]
});
let log = "";
let enginePid = null;
const crashLogs = [];
let heapAfterFullGcMiB = null;
const fullGcs = []; // every mark-compact the server reported // from --trace-gc: "Mark-Compact 5.1 (7.3) -> 4.8 (7.8) MB"
const onOutput = (chunk) => {
    const text = chunk.toString();
    // the engine child inherits --trace-gc and its lines arrive here prefixed "[engine …]": only the server's count
    const serverLines = text.split("\n").filter((line) => !line.includes("[engine")).join("\n");
    for (const match of serverLines.matchAll(/(\d+) ms: (Mark-Compact[^\n]*?)([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/g)) {
        heapAfterFullGcMiB = Number(match[5]);
        fullGcs.push({ms: Number(match[1]), kind: match[2].trim(), beforeMiB: Number(match[3]), afterMiB: heapAfterFullGcMiB});
    }
    log = (log + text.replace(/^\[\d+:0x[0-9a-f]+\].*\n?/gm, "")).slice(-200_000);
    // an engine that died of anything but the soak's own SIGKILL: keep the output before it (capped) to read why
    if (/killed by SIG(?!KILL)|GGML_ASSERT|Assertion/.test(text) && crashLogs.length < 5)
        crashLogs.push(log.slice(-15_000));
    for (const match of text.matchAll(/engine started pid=(\d+)/g))
        enginePid = Number(match[1]);
};
server.stdout.on("data", onOutput);
server.stderr.on("data", onOutput);
let serverExit = null;
server.on("exit", (code, signal) => serverExit = {code, signal});
const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`web mode did not start:\n${log}`)), 60_000);
    server.stdout.on("data", () => {
        const match = /Open http:\/\/127\.0\.0\.1:(\d+)\/#token=(\S+)/.exec(log);
        if (match != null) {
            clearTimeout(timer);
            resolve({port: Number(match[1]), token: match[2]});
        }
    });
});
const {port, token} = url;

function raw(method, target, {body, headers = {}} = {}) {
    return new Promise((resolve) => {
        const request = http.request({host: "127.0.0.1", port, method, path: target,
            headers: {host: `127.0.0.1:${port}`, authorization: `Bearer ${token}`, ...headers}}, (response) => {
            let text = "";
            response.on("data", (chunk) => text += chunk);
            response.on("end", () => resolve({status: response.statusCode, text}));
        });
        request.on("error", (error) => resolve({status: 0, text: String(error)}));
        request.setTimeout(120_000, () => request.destroy(new Error("timeout")));
        request.end(body);
    });
}

// --- events ---------------------------------------------------------------------------------------------------
const events = [];
let clientId = null;
const eventStream = http.get({host: "127.0.0.1", port, path: `/api/events?token=${token}`, headers: {host: `127.0.0.1:${port}`}}, (response) => {
    let buffer = "";
    response.setEncoding("utf8");
    response.on("data", (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            // `event: hello` carries the client id; every other block is one event envelope (electron/contract/envelope.ts)
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (data == null)
                continue;
            if (/^event: hello$/m.test(block)) {
                clientId = JSON.parse(data).clientId;
                continue;
            }
            const {name, payload} = JSON.parse(data);
            if (name !== "chat.delta" && name !== "task.progress")
                events.push({name, payload, at: Date.now()});
        }
    });
});
eventStream.on("error", () => {});
while (clientId == null)
    await sleep(50);

async function call(name, arg) {
    const response = await raw("POST", `/api/request/${name}`, {body: JSON.stringify({arg}),
        headers: {"content-type": "application/json", "x-tensorwise-client": clientId}});
    try {
        return JSON.parse(response.text);
    } catch {
        return {ok: false, error: {code: `http-${response.status}`, message: response.text.slice(0, 200)}};
    }
}

function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(predicate, timeoutMs) {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
        const found = events.find(predicate);
        if (found != null)
            return found;
        await sleep(25);
    }
    return null;
}

async function engineState() {
    const answer = await call("engine.state");
    return answer.ok ? answer.result.state : "unknown";
}

async function waitForReady(timeoutMs = 180_000) {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
        const current = await engineState();
        if (current === "ready")
            return true;
        if (current === "crashed")
            await call("engine.restart");
        else if (current === "idle")
            await load();
        await sleep(250);
    }
    return false;
}

async function load() {
    return await call("model.autoOffload", {path: modelPath, budget: {kind: "auto"}, settings: {contextSize: 1024}, taskId: `soak-${Date.now()}`});
}

// --- sampling -------------------------------------------------------------------------------------------------
/**
 * Where a process's resident memory lives, from /proc/PID/smaps, in MiB: `brk` ([heap]: small malloc allocations),
 * `anon` (anonymous mappings: V8's heap pages, large malloc chunks and other threads' malloc arenas), `files`
 * (mapped code and data files) and `stack`. Growth in `anon` while the V8 heap after a full GC stays flat points at
 * native allocations; growth in `brk` at the main thread's malloc.
 */
function rssByKind(pid) {
    const kinds = {brk: 0, anon: 0, files: 0, stack: 0};
    let kind = "anon";
    for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
        const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (mapping != null) {
            const name = mapping[1];
            kind = name === "[heap]" ? "brk" : name === "" ? "anon" : name.startsWith("[stack") ? "stack" : name.startsWith("/") ? "files" : "anon";
            continue;
        }
        const rss = /^Rss:\s+(\d+) kB/.exec(line);
        if (rss != null)
            kinds[kind] += Number(rss[1]) / 1024;
    }
    return Object.fromEntries(Object.entries(kinds).map(([name, mib]) => [name, Number(mib.toFixed(2))]));
}

function processSample(pid) {
    if (pid == null)
        return null;
    try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
        const fds = readdirSync(`/proc/${pid}/fd`);
        const files = fds.filter((fd) => {
            try {
                return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("/");
            } catch {
                return false;
            }
        }).length;
        return {rssMiB: rssKiB / 1024, fds: fds.length, files, rssByKind: rssByKind(pid)};
    } catch {
        return null;
    }
}

const samples = [];
const counts = {sent: 0, done: 0, stopped: 0, errors: 0, engineKills: 0, reloads: 0, hostile: 0, refused: 0};
let round = 0;
const errorSamples = []; // the first errors, with what they said
const noteError = (kind, detail) => {
    counts.errors++;
    if (errorSamples.length < 20)
        errorSamples.push({round, kind, detail: String(detail).slice(0, 300)});
};
const savedReplies = new Map(); // messageId → conversationId, for replies chat.done reported
const began = Date.now();
const storedConversations = () => {
    try {
        return readdirSync(path.join(dataDir, "conversations")).filter((name) => name.endsWith(".json")).length;
    } catch {
        return null;
    }
};
const serverSample = () => {
    const sample = processSample(server.pid);
    return sample == null || heapAfterFullGcMiB == null ? sample : {...sample, heapAfterFullGcMiB};
};
const sampler = setInterval(() => {
    samples.push({t: Math.round((Date.now() - began) / 1000), server: serverSample(), engine: processSample(enginePid), storedConversations: storedConversations(),
        kvStateMiB: Number((kvStateOnDisk(tmpDir).bytes / 2 ** 20).toFixed(2))});
}, SAMPLE_MS);
/** Asks the server for a heap snapshot (--heapsnapshot-signal) and waits until the file is complete. */
async function heapSnapshot() {
    const before = new Set(readdirSync(heapDir));
    server.kill("SIGUSR2");
    for (let waited = 0; waited < 120_000; waited += 500) {
        await sleep(500);
        const added = readdirSync(heapDir).find((name) => !before.has(name) && name.endsWith(".heapsnapshot"));
        if (added != null) {
            // the file is written synchronously by the server's main thread: once it answers, the file is whole
            await raw("GET", "/");
            return path.join(heapDir, added);
        }
    }
    return null;
}
const snapshots = [];
let earlySnapshotTaken = !values.snapshots;

// --- the workload ---------------------------------------------------------------------------------------------
const HOSTILE = [
    ["GET", "//[x"], ["GET", "/%E0%A4%A"], ["POST", "/api/request/%E0%A4%A"], ["GET", "/api/bench/%E0%A4%A/csv"],
    ["POST", "/api/request/model.autoOffload", JSON.stringify({arg: {path: modelPath, budget: {kind: "auto"}, settings: {contextSize: 2 ** 31}, taskId: "x"}})],
    ["POST", "/api/request/chat.send", JSON.stringify({arg: {conversationId: "x", text: "y", streamId: "z", maxTokens: -1}})],
    ["POST", "/api/request/model.inspect", JSON.stringify({arg: {path: "/etc/shadow"}})],
    ["POST", "/api/request/conversations.rename", "{"]
];

await waitForReady();
const traffic = values.serve ? startServeTraffic({call, tmpDir, random, noteError, sleep}) : null;
const deadline = began + minutes * 60_000;
while (Date.now() < deadline && serverExit == null) {
    round++;
    if (!earlySnapshotTaken && Date.now() - began > minutes * 15_000) {
        earlySnapshotTaken = true;
        snapshots.push(await heapSnapshot());
    }
    const roll = random();
    if (roll < 0.06) {
        // kill the engine mid-reply or idle, then restart it
        if (enginePid != null) {
            try {
                process.kill(enginePid, "SIGKILL");
                counts.engineKills++;
            } catch { /* already gone */ }
        }
        await sleep(300);
        await waitForReady();
        continue;
    }
    if (roll < 0.10) {
        await call("model.unload");
        const answer = await load();
        counts.reloads++;
        if (!answer.ok)
            noteError("reload", answer.error?.message);
        continue;
    }
    if (roll < 0.20) {
        for (const [method, target, body] of HOSTILE) {
            await raw(method, target, {body, headers: {"x-tensorwise-client": clientId, "content-type": "application/json"}});
            counts.hostile++;
        }
        continue;
    }
    // a chat turn, stopped mid-reply a third of the time
    const created = await call("conversations.create", {});
    if (!created.ok) {
        noteError("create", created.error?.message);
        await waitForReady();
        continue;
    }
    const conversationId = created.result.id;
    const streamId = `soak-${round}`;
    const sent = await call("chat.send", {conversationId, text: `Tell me about round ${round}.`, streamId, maxTokens: 24 + Math.floor(random() * 48), temperature: 0.7});
    if (!sent.ok) {
        // the app user's own chat goes ahead of API clients: refused as busy is a failure, not a down engine
        if (/busy|queue/i.test(sent.error?.message ?? ""))
            noteError("app chat refused as busy", sent.error?.message);
        else
            counts.refused++;
        await waitForReady();
        continue;
    }
    counts.sent++;
    if (random() < 0.33) {
        await sleep(50 + random() * 400);
        await call("chat.stop", {streamId});
    }
    const end = await waitFor((event) => (event.name === "chat.done" || event.name === "chat.error") && event.payload.streamId === streamId, 120_000);
    if (end?.name === "chat.done") {
        if (end.payload.message.stopped === "user")
            counts.stopped++;
        else
            counts.done++;
        savedReplies.set(end.payload.message.id, conversationId);
    } else
        noteError(end == null ? "no answer in 120 s" : "chat.error", end?.payload.error);
    // keep the event list short: done/error of finished streams are no longer needed
    events.splice(0, Math.max(0, events.length - 200));
    if (round % 25 === 0)
        for (const summary of (await call("conversations.list")).result ?? [])
            if (random() < 0.5)
                await call("conversations.delete", {id: summary.id}).then(() => {
                    for (const [messageId, owner] of savedReplies)
                        if (owner === summary.id)
                            savedReplies.delete(messageId);
                });
}
const serveCounts = traffic == null ? null : await traffic.stop();
clearInterval(sampler);
samples.push({t: Math.round((Date.now() - began) / 1000), server: serverSample(), engine: processSample(enginePid)});
if (values.snapshots)
    snapshots.push(await heapSnapshot());

// --- checks ---------------------------------------------------------------------------------------------------
const exitedEarly = serverExit;
const stillAnswers = (await raw("GET", "/")).status === 200 && (await call("engine.state")).ok === true;
const lost = [];
for (const [messageId, conversationId] of savedReplies) {
    const answer = await call("conversations.get", {id: conversationId});
    if (!answer.ok || !answer.result.messages.some((message) => message.id === messageId))
        lost.push(messageId);
}
const conversationsDir = path.join(dataDir, "conversations");
const invalidFiles = readdirSync(conversationsDir).filter((name) => name.endsWith(".json")).filter((name) => {
    try {
        JSON.parse(readFileSync(path.join(conversationsDir, name), "utf8"));
        return false;
    } catch {
        return true;
    }
});
eventStream.destroy();
server.kill("SIGTERM");
await new Promise((resolve) => server.once("exit", resolve));
// web mode has stopped: its engine's server must have removed its KV state folder
const leftOverKv = kvStateOnDisk(tmpDir);

/** Mean of a metric over the second quarter and the last quarter of the run: a leak shows as growth between them. */
function drift(pick) {
    const values = samples.map(pick).filter((value) => Number.isFinite(value));
    if (values.length < 8)
        return null;
    const quarter = Math.floor(values.length / 4);
    const mean = (list) => list.reduce((sum, value) => sum + value, 0) / list.length;
    const early = mean(values.slice(quarter, 2 * quarter));
    const late = mean(values.slice(-quarter));
    return {early: Number(early.toFixed(1)), late: Number(late.toFixed(1)), growthPercent: Number((100 * (late - early) / early).toFixed(1))};
}

const result = {
    startedAt: new Date(began).toISOString(), minutes, seed: Number(values.seed), machine: `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.release()}`,
    counts, serve: serveCounts, kvStateLeftAfterStop: leftOverKv, errorSamples, lostReplies: lost, invalidConversationFiles: invalidFiles, serverExitedEarly: exitedEarly, serverStillAnswered: stillAnswers,
    drift: {
        serverRssMiB: drift((sample) => sample.server?.rssMiB), serverFds: drift((sample) => sample.server?.fds),
        serverHeapAfterFullGcMiB: drift((sample) => sample.server?.heapAfterFullGcMiB),
        serverBrkMiB: drift((sample) => sample.server?.rssByKind?.brk), serverAnonMiB: drift((sample) => sample.server?.rssByKind?.anon),
        engineRssMiB: drift((sample) => sample.engine?.rssMiB), engineFds: drift((sample) => sample.engine?.fds),
        kvStateMiB: drift((sample) => sample.kvStateMiB)
    },
    samples, fullGcs
};
mkdirSync(outDir, {recursive: true});
writeFileSync(path.join(outDir, "soak.json"), JSON.stringify(result, null, 2) + "\n");
const row = (label, value) => `| ${label} | ${value == null ? "–" : `${value.early} → ${value.late} (${value.growthPercent >= 0 ? "+" : ""}${value.growthPercent}%)`} |`;
const summary = [
    `# Soak run ${result.startedAt}`, "",
    `${minutes} min on ${result.machine}, seed ${result.seed}: \`node bench/drivers/soak.mjs --minutes ${minutes} --seed ${result.seed}\``, "",
    `Actions: ${counts.sent} replies started (${counts.done} finished, ${counts.stopped} stopped by the user), ${counts.engineKills} engine kills (SIGKILL) ` +
    `with restart, ${counts.reloads} model reloads, ${counts.hostile} hostile requests, ${counts.refused} sends refused while the engine was down, ${counts.errors} errors.`, "",
    `Nothing lost: ${lost.length === 0 ? "yes" : `NO — ${lost.length} saved replies missing`}; conversation files valid JSON: ` +
    `${invalidFiles.length === 0 ? "all" : `NO — ${invalidFiles.join(", ")}`}; server ${exitedEarly == null && stillAnswers ? "stayed up and answered at the end" : "DIED or stopped answering"}.`, "",
    ...(serveCounts == null ? [] : [
        `API traffic (--serve): the server first served ${serveCounts.firstServingAfterMs == null ? "NEVER" : `${(serveCounts.firstServingAfterMs / 1000).toFixed(1)} s after it was turned on`}; ${serveCounts.apiSent} conversation requests and ${serveCounts.hostile} hostile ones (${serveCounts.bursts} bursts of 70); ` +
        `answers by status ${JSON.stringify(serveCounts.byStatus)}; ${serveCounts.unavailable} while the engine was down; the slowest refusal of a 3 MB body ` +
        `${serveCounts.oversizeMaxMs} ms. KV state on disk at most ${(serveCounts.tempMaxBytes / 2 ** 20).toFixed(1)} MiB in ${serveCounts.tempMaxFolders} folder(s); ` +
        `after stopping: ${leftOverKv.folders === 0 ? "none left" : `NO — ${leftOverKv.folders} folder(s), ${leftOverKv.bytes} bytes left`}.`, ""]),
    "Mean over the run's second quarter → its last quarter (a leak shows as steady growth):", "",
    "| metric | second quarter → last quarter |", "|---|---|",
    row("server RSS (MiB)", result.drift.serverRssMiB), row("server open descriptors", result.drift.serverFds),
    row("server RSS in malloc's main heap, [heap] (MiB)", result.drift.serverBrkMiB),
    row("server RSS in anonymous mappings (MiB)", result.drift.serverAnonMiB),
    ...(values.heap ? [row("server V8 heap after full GC (MiB)", result.drift.serverHeapAfterFullGcMiB)] : []),
    row("engine RSS (MiB)", result.drift.engineRssMiB), row("engine open descriptors", result.drift.engineFds),
    ...(serveCounts == null ? [] : [row("KV state files on disk (MiB)", result.drift.kvStateMiB)]), ""
].join("\n");
writeFileSync(path.join(outDir, "soak.md"), summary);
// the server's and engine's last output, to read what went wrong when something did
writeFileSync(path.join(outDir, "server-log-tail.txt"), [...crashLogs.map((text, index) => `=== engine crash ${index + 1} ===\n${text}`), "=== the end ===", log].join("\n"));
if (snapshots.length === 2 && snapshots.every((file) => file != null)) {
    const {heapDiff} = await import("./heapDiff.mjs");
    writeFileSync(path.join(outDir, "heap-diff.md"), heapDiff(snapshots[0], snapshots[1]));
}
process.stdout.write(summary + `\nwrote ${path.join(outDir, "soak.json")} and soak.md\n`);
const kvClean = serveCounts == null || leftOverKv.folders === 0;
process.exit(lost.length === 0 && invalidFiles.length === 0 && exitedEarly == null && stillAnswers && kvClean ? 0 : 1);
