/**
 * CORS from a hostile page's side: only origins on the allow-list get CORS headers, byte for byte (no suffix, prefix,
 * port, case or wildcard games, no `null`); a preflight is answered before the key check but never runs a request nor
 * tells anything about the server; errors and event streams to a listed origin carry the headers; without a list
 * nothing changes; and the DNS-rebinding Host check still refuses a foreign Host. The list's own checks, as a flag and
 * as the Server screen's change: electron/cli/commands/serveFlags.test.ts, electron/host/checkRequest.test.ts.
 */
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ServedRequest} from "../../contract/server.js";
import type {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../serveOpenAi.js";
import {rawRequest, type RawAnswer} from "../../engine/testing/rawRequest.js";
import {loadTestModel, serveTestModel} from "../testing/servedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] CORS tests: ${probe.reason}`);

const KEY = "tw-cors-test-key-0123456789";
const APP = "http://localhost:5173";
const OTHER = "https://chat.example.org";
const chat = JSON.stringify({messages: [{role: "user", content: "hi"}], max_tokens: 2, temperature: 0});

/**
 * Origins a hostile page (or a non-browser pretending) may send, none of which is on the list. (Spaces around the
 * value are not among them: HTTP strips them before anyone reads the header, RFC 9110 §5.5.)
 */
const HOSTILE_ORIGINS = [
    "http://evil.com", "null", "http://localhost:5174", "http://localhost", "https://localhost:5173", "http://127.0.0.1:5173",
    "http://localhost:5173.evil.com", "http://evil.com/http://localhost:5173", "http://evil.localhost:5173", "http://localhost:51730",
    "http://localhost:517", "http://LOCALHOST:5173", "HTTP://localhost:5173", "http://localhost:5173/", "*", "http://*", "http://localhost:5173, http://evil.com", "https://chat.example.org.evil.com",
    "https://evil-chat.example.org", "http://chat.example.org"
];

const CORS_HEADERS = ["access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers", "access-control-max-age",
    "access-control-allow-credentials", "access-control-expose-headers"];

function noCorsHeaders(answer: RawAnswer): void {
    for (const name of CORS_HEADERS)
        expect(answer.headers[name], name).toBeUndefined();
}

function preflight(server: OpenAiServer, origin: string | string[], path = "/v1/chat/completions", requestHeaders = "authorization, content-type"): Promise<RawAnswer> {
    return rawRequest(server.port, {method: "OPTIONS", path, headers: {
        Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": requestHeaders
    }});
}

describe.skipIf(probe.reason != null)("CORS on the server (CPU, generated model)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    const served: ServedRequest[] = [];

    beforeAll(async () => {
        placed = await loadTestModel(probe.engine!);
        server = await serveTestModel(placed, {apiKeys: [KEY], corsOrigins: [APP, OTHER], onServed: (entry) => served.push(entry)});
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("answers a listed origin's preflight with 204 before the key check, naming what the SDKs send, and runs nothing", async () => {
        const before = served.length;
        const answer = await rawRequest(server.port, {method: "OPTIONS", path: "/v1/chat/completions", headers: {
            Origin: APP, "Access-Control-Request-Method": "POST", "Content-Type": "application/json",
            "Access-Control-Request-Headers": "authorization, content-type, x-api-key, anthropic-version, x-stainless-os, x-stainless-retry-count"
        }, body: chat});
        expect(answer.status).toBe(204);
        expect(answer.text).toBe("");
        expect(answer.headers["access-control-allow-origin"]).toBe(APP);
        expect(answer.headers.vary).toBe("Origin");
        expect(answer.headers["access-control-allow-methods"]).toBe("GET, POST, OPTIONS");
        const allowed = String(answer.headers["access-control-allow-headers"]).split(", ");
        expect(allowed).toEqual(expect.arrayContaining(["authorization", "content-type", "x-api-key", "anthropic-version", "x-stainless-os", "x-stainless-retry-count"]));
        expect(Number(answer.headers["access-control-max-age"])).toBeGreaterThan(0);
        expect(answer.headers["access-control-allow-credentials"]).toBeUndefined();
        // the same answer on any path, even one that does not exist: a preflight tells nothing about the server
        const elsewhere = await preflight(server, OTHER, "/v1/no-such-endpoint");
        expect(elsewhere.status).toBe(204);
        expect(elsewhere.headers["access-control-allow-origin"]).toBe(OTHER);
        expect(served.length).toBe(before);
    });

    it("refuses every origin not on the list — suffix, prefix, port, case, wildcard, null — without a single CORS header", async () => {
        for (const origin of HOSTILE_ORIGINS) {
            const answer = await preflight(server, origin);
            expect(answer.status, origin).toBe(403);
            noCorsHeaders(answer);
            expect(answer.headers.vary).toBe("Origin");
            expect(JSON.parse(answer.text).error.code, origin).toBe("origin_not_allowed");
            // an actual request from it (with the right key) is answered, but a browser page on it cannot read it
            const actual = await rawRequest(server.port, {method: "GET", path: "/v1/models", headers: {Origin: origin, Authorization: `Bearer ${KEY}`}});
            expect(actual.status, origin).toBe(200);
            noCorsHeaders(actual);
        }
        // the header twice (two origins, each listed) and none at all
        noCorsHeaders(await preflight(server, [APP, OTHER]));
        const none = await rawRequest(server.port, {method: "OPTIONS", path: "/v1/models", headers: {"Access-Control-Request-Method": "GET"}});
        expect(none.status).toBe(403);
        noCorsHeaders(none);
    });

    it("refuses a preflight asking for a header outside the list, by name", async () => {
        const answer = await preflight(server, APP, "/v1/chat/completions", "authorization, x-forwarded-for");
        expect(answer.status).toBe(403);
        expect(JSON.parse(answer.text).error.message).toMatch(/"x-forwarded-for"/);
        expect(answer.headers["access-control-allow-headers"]).toBeUndefined();
    });

    it("puts the listed origin on answers, errors and event streams alike", async () => {
        const headers = {Origin: APP, Authorization: `Bearer ${KEY}`, "Content-Type": "application/json"};
        const ok = await rawRequest(server.port, {method: "POST", path: "/v1/chat/completions", headers, body: chat});
        expect(ok.status).toBe(200);
        expect(ok.headers["access-control-allow-origin"]).toBe(APP);
        expect(ok.headers.vary).toBe("Origin");
        const wrongKey = await rawRequest(server.port, {method: "POST", path: "/v1/chat/completions", headers: {...headers, Authorization: "Bearer tw-cors-test-key-0123456780"}, body: chat});
        expect(wrongKey.status).toBe(401);
        expect(wrongKey.headers["access-control-allow-origin"]).toBe(APP);
        const badBody = await rawRequest(server.port, {method: "POST", path: "/v1/chat/completions", headers, body: "{"});
        expect(badBody.status).toBe(400);
        expect(badBody.headers["access-control-allow-origin"]).toBe(APP);
        const stream = await rawRequest(server.port, {method: "POST", path: "/v1/chat/completions", headers: {...headers, Origin: OTHER},
            body: JSON.stringify({...JSON.parse(chat), stream: true})});
        expect(stream.headers["content-type"]).toMatch(/text\/event-stream/);
        expect(stream.headers["access-control-allow-origin"]).toBe(OTHER);
        expect(stream.text).toMatch(/data: \[DONE\]/);
    });

    it("still refuses a foreign Host on a server without keys (DNS rebinding), preflight or not, even from a listed origin", async () => {
        await server.close();
        server = await serveTestModel(placed, {corsOrigins: [APP]});
        const host = `evil.example:${server.port}`;
        const pre = await rawRequest(server.port, {method: "OPTIONS", path: "/v1/models", headers: {Host: host, Origin: APP, "Access-Control-Request-Method": "GET"}});
        expect(pre.status).toBe(421);
        expect(pre.headers["access-control-allow-methods"]).toBeUndefined();
        const rebound = await rawRequest(server.port, {method: "GET", path: "/v1/models", headers: {Host: host, Origin: "http://evil.example:" + server.port}});
        expect(rebound.status).toBe(421);
        noCorsHeaders(rebound);
        const local = await preflight(server, APP, "/v1/models");
        expect(local.status).toBe(204);
    });

    it("adds nothing without a list: OPTIONS is answered as any other unsupported request, with no CORS header", async () => {
        await server.close();
        server = await serveTestModel(placed, {apiKeys: [KEY]});
        const answer = await preflight(server, APP);
        expect(answer.status).toBe(401);
        noCorsHeaders(answer);
        expect(answer.headers.vary).toBeUndefined();
        const withKey = await rawRequest(server.port, {method: "OPTIONS", path: "/v1/models", headers: {Origin: APP, Authorization: `Bearer ${KEY}`, "Access-Control-Request-Method": "GET"}});
        expect(withKey.status).toBe(405);
        noCorsHeaders(withKey);
    });
});
