// The soak's API traffic (bench/drivers/soak.mjs --serve): turns the app's OpenAI-compatible server on through the same
// request the Server screen sends, then, while the soak's app chats, engine kills and reloads go on, drives it as
// several clients at once:
// - conversation clients: multi-turn chats under `X-Conversation-Id`, more conversations than sequences, so state is
//   swapped out and back in (the KV state files this run watches);
// - a hostile client, every few seconds: bodies of 3 MB (refused before tokenizing), wrong keys of every shape, another
//   client's conversation id, and bursts of 70 requests that fill the queue while the app user chats.
// It samples the server's temp folder (the `tensorwise-kv-*` state folders) and reports what every request got.
import http from "node:http";
import {existsSync, readdirSync, statSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

// the state folders' name prefix, from the server's own module (needs `npm run build`, as the soak does)
const {KV_FOLDER_PREFIX} = await import(path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "electron", "serve", "kv", "kvStateFolder.js"));

/** Conversations the clients take turns in (more than the server's 4 sequences, so state leaves and comes back). */
const CONVERSATIONS = 24;
const CONVERSATION_CLIENTS = 3;
/** Turns kept per conversation (older ones dropped, so a prompt stays well inside the soak's 1024-token context). */
const KEPT_TURNS = 3;
const HOSTILE_EVERY_MS = 20_000;
const BURST = 70;

/** Bytes under `dir` in `tensorwise-kv-*` folders, and how many such folders there are. */
export function kvStateOnDisk(dir) {
    let bytes = 0;
    let folders = 0;
    const walk = (folder) => {
        for (const entry of readdirSync(folder, {withFileTypes: true})) {
            const full = path.join(folder, entry.name);
            try {
                if (entry.isDirectory())
                    walk(full);
                else
                    bytes += statSync(full).size;
            } catch { /* removed meanwhile */ }
        }
    };
    if (!existsSync(dir))
        return {bytes, folders};
    for (const entry of readdirSync(dir, {withFileTypes: true}))
        if (entry.isDirectory() && entry.name.startsWith(KV_FOLDER_PREFIX)) {
            folders++;
            try {
                walk(path.join(dir, entry.name));
            } catch { /* removed meanwhile */ }
        }
    return {bytes, folders};
}

function apiRequest(base, method, target, {body, key, headers = {}, timeoutMs = 120_000} = {}) {
    return new Promise((resolve) => {
        const started = Date.now();
        const request = http.request(`${base}${target}`, {method, headers: {
            "content-type": "application/json", ...(key != null ? {authorization: `Bearer ${key}`} : {}), ...headers
        }}, (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk) => text += chunk);
            response.on("end", () => resolve({status: response.statusCode ?? 0, text, ms: Date.now() - started}));
            response.on("error", () => resolve({status: 0, text: "response error", ms: Date.now() - started}));
        });
        request.on("error", (error) => resolve({status: 0, text: String(error), ms: Date.now() - started}));
        request.setTimeout(timeoutMs, () => request.destroy(new Error("timeout")));
        request.end(body);
    });
}

/**
 * Starts the traffic. `call(name, arg)` is the soak's app request; `tmpDir` the server's temp folder; `random` the
 * soak's PRNG; `noteError(kind, detail)` records a failure. Returns `stop()`, which resolves to the counts.
 */
export function startServeTraffic({call, tmpDir, random, noteError, sleep}) {
    const counts = {firstServingAfterMs: null, apiSent: 0, byStatus: {}, hostile: 0, bursts: 0, oversizeMaxMs: 0, unavailable: 0, tempMaxBytes: 0, tempMaxFolders: 0};
    /** Counts an answer by status; 0 (no connection) and 503 are the engine restarting after a kill: `unavailable`. */
    const count = (status) => {
        if (status === 0 || status === 503)
            counts.unavailable++;
        else
            counts.byStatus[status] = (counts.byStatus[status] ?? 0) + 1;
    };
    let stopping = false;
    let server = null;

    async function serving(timeoutMs) {
        const started = Date.now();
        while (Date.now() - started < timeoutMs && !stopping) {
            const answer = await call("server.get");
            if (answer.ok && answer.result.status === "serving" && answer.result.url != null)
                return answer.result;
            await sleep(500);
        }
        return null;
    }


    /** The current URL and key (the port changes when the engine restarts after a kill). */
    async function current() {
        const state = await serving(120_000);
        if (state != null)
            server = state;
        return state;
    }

    const histories = Array.from({length: CONVERSATIONS}, () => []);
    const busy = new Set();
    async function conversationClient(client) {
        let turn = 0;
        while (!stopping) {
            const state = server;
            let index = Math.floor(random() * CONVERSATIONS);
            while (busy.has(index))
                index = (index + 1) % CONVERSATIONS;
            busy.add(index);
            const history = histories[index];
            const messages = [...history.slice(-2 * KEPT_TURNS), {role: "user", content: `Client ${client}, turn ${++turn}: say something about ${index}.`}];
            const stream = random() < 0.5;
            const answer = await apiRequest(state.url, "POST", "/chat/completions", {
                key: state.apiKey, headers: {"x-conversation-id": `soak-conversation-${index}`},
                body: JSON.stringify({messages, max_tokens: 8 + Math.floor(random() * 16), stream, temperature: 0.7})
            });
            busy.delete(index);
            counts.apiSent++;
            count(answer.status);
            if (answer.status === 200) {
                let reply = "";
                if (stream)
                    for (const match of answer.text.matchAll(/^data: (\{.*\})$/gm))
                        reply += JSON.parse(match[1]).choices?.[0]?.delta?.content ?? "";
                else
                    reply = JSON.parse(answer.text).choices[0].message.content;
                histories[index] = [...messages, {role: "assistant", content: reply}].slice(-2 * KEPT_TURNS);
            } else if (answer.status === 0 || answer.status === 503) {
                // the engine is restarting after a kill: wait for the server rather than spin on a closed port
                await sleep(250);
                await current();
            } else if (answer.status >= 500)
                noteError(`api ${answer.status}`, answer.text);
            else if (answer.status !== 429)
                noteError(`api ${answer.status}`, answer.text);
        }
    }

    async function hostileClient() {
        while (!stopping) {
            await sleep(HOSTILE_EVERY_MS * (0.5 + random()));
            const state = stopping ? null : await current();
            if (state == null)
                break;
            const chat = (extra = {}) => JSON.stringify({messages: [{role: "user", content: "hi"}], max_tokens: 4, ...extra});
            // 8 bodies of 3 MB at once: each must be refused (400/413) without stalling the others
            const huge = JSON.stringify({messages: [{role: "user", content: "x".repeat(3 * 2 ** 20)}], max_tokens: 4});
            const refused = await Promise.all(Array.from({length: 8}, () => apiRequest(state.url, "POST", "/chat/completions", {key: state.apiKey, body: huge})));
            for (const answer of refused) {
                counts.hostile++;
                count(answer.status);
                counts.oversizeMaxMs = Math.max(counts.oversizeMaxMs, answer.ms);
                if (answer.status !== 400 && answer.status !== 413 && answer.status !== 0 && answer.status !== 503)
                    noteError("oversize body not refused", `${answer.status} ${answer.text}`);
            }
            // wrong keys: absent, empty, the right length but wrong (all, or the last character), a prefix, one character more (HTTP strips spaces at the ends)
            const key = state.apiKey;
            for (const wrong of [null, "", "x".repeat(key.length), key.slice(0, -1), `${key.slice(0, -1)}x`, `${key}x`]) {
                const answer = await apiRequest(state.url, "POST", "/chat/completions", {key: wrong, body: chat()});
                counts.hostile++;
                count(answer.status);
                if (answer.status !== 401 && answer.status !== 0)
                    noteError("wrong key not refused", `${JSON.stringify(wrong)}: ${answer.status}`);
            }
            // another client's conversation id with a guessed prompt: must not be answered from its cache
            const probe = await apiRequest(state.url, "POST", "/chat/completions", {key, headers: {"x-conversation-id": "soak-conversation-0"},
                body: chat({messages: [{role: "user", content: "Client 0, turn 1: say something about 0."}]})});
            counts.hostile++;
            count(probe.status);
            if (probe.status === 200 && /"evicted":\{"conversation"/.test(probe.text))
                noteError("answer names another conversation", probe.text.slice(0, 300));
            // a burst that fills the queue while the app user chats (the soak's main loop)
            if (random() < 0.5) {
                counts.bursts++;
                const burst = await Promise.all(Array.from({length: BURST}, () => apiRequest(state.url, "POST", "/chat/completions", {key, body: chat()})));
                for (const answer of burst) {
                    counts.hostile++;
                    count(answer.status);
                    if (answer.status >= 500 && answer.status !== 503)
                        noteError(`burst ${answer.status}`, answer.text);
                }
            }
        }
    }

    const sampler = setInterval(() => {
        const disk = kvStateOnDisk(tmpDir);
        counts.tempMaxBytes = Math.max(counts.tempMaxBytes, disk.bytes);
        counts.tempMaxFolders = Math.max(counts.tempMaxFolders, disk.folders);
    }, 2_000);
    // the server starts in the background (its first start calibrates the KV cost model), while the soak goes on
    const running = (async () => {
        // turning it on answers once the server started (its first start calibrates): timed from the request
        const started = Date.now();
        const enabled = await call("server.set", {enabled: true, port: 0});
        if (!enabled.ok)
            throw new Error(`could not turn the server on: ${enabled.error?.message}`);
        server = await serving(Number.POSITIVE_INFINITY);
        if (server == null)
            return;
        counts.firstServingAfterMs = Date.now() - started;
        await Promise.all([...Array.from({length: CONVERSATION_CLIENTS}, (_, client) => conversationClient(client)), hostileClient()]);
    })();
    return {
        async stop() {
            stopping = true;
            await running.catch((error) => noteError("serve traffic", error));
            clearInterval(sampler);
            return counts;
        }
    };
}
