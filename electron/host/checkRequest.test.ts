import {describe, expect, it} from "vitest";
import type {RequestName} from "../contract/ipc.js";
import {requestNames} from "../contract/requestNames.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {checkRequest} from "./checkRequest.js";

/** A valid argument for every request that takes one; requests without an argument ignore what they get. */
const valid: Partial<Record<RequestName, unknown>> = {
    "model.inspect": {path: "/m.gguf"},
    "library.load": {path: "/m.gguf", taskId: "t"},
    "library.forget": {path: "/m.gguf"},
    "hub.search": {query: "llama"},
    "hub.quants": {repo: "org/model-GGUF", profile: false, taskId: "t"},
    "hub.pull": {repo: "org/model-GGUF", quant: "Q4_K_M", taskId: "t"},
    "model.autoOffload": {path: "/m.gguf", budget: {kind: "percent", percent: 50}, settings: {contextSize: 2048, threads: null}, strategy: "optimal", taskId: "t"},
    "model.load": {path: "/m.gguf", gpuLayers: 3, settings: {}, taskId: "t"},
    "task.cancel": {taskId: "t"},
    "conversations.get": {id: "c"},
    "conversations.delete": {id: "c"},
    "conversations.create": {title: "hello"},
    "conversations.rename": {id: "c", title: "new"},
    "chat.send": {conversationId: "c", text: "hi", streamId: "s", maxTokens: 16, temperature: 0.7},
    "chat.regenerate": {conversationId: "c", streamId: "s"},
    "chat.stop": {streamId: "s"},
    "chat.edit": {conversationId: "c", messageId: "m", text: "again", streamId: "s"},
    "conversations.setSettings": {id: "c", settings: {systemPrompt: "Be brief.", topK: 40, topP: 0.9, minP: 0.05, repeatPenalty: 1.1, seed: 7, stopStrings: ["\n\n"]}},
    "conversations.deleteMessage": {id: "c", messageId: "m"},
    "conversations.export": {id: "c", format: "markdown"},
    "conversations.import": {text: "{}"},
    "conversations.search": {query: "borrow"},
    "bench.start": {benchId: "b", budgets: [{kind: "percent", percent: 50}], promptLengths: [32], genLengths: [8], strategies: ["cpu"], repeats: 1},
    "bench.stop": {benchId: "b"},
    "bench.get": {id: "b"},
    "bench.export": {id: "b", format: "csv"},
    "dialog.saveBenchReport": {id: "b", format: "html"},
    "server.set": {enabled: true, port: 8080, bindAddress: "127.0.0.1", requireKey: true, parallel: 4, regenerateKey: false},
    "rpc.add": {endpoint: "192.168.1.20:50052"},
    "rpc.remove": {endpoint: "10.0.0.3:50052"},
    "chat.decideTool": {streamId: "s", callId: "call_1", decision: "approve"},
    "tools.save": {config: {name: "files", enabled: true, launch: {transport: "stdio", command: "npx", args: ["-y", "x"], env: {}, cwd: null},
        callTimeoutSeconds: 60, alwaysAllow: []}},
    "tools.remove": {name: "files"},
    "tools.start": {name: "files"},
    "tools.stop": {name: "files"},
    "tools.import": {text: "{}"}
};

function rejects(name: RequestName, arg: unknown): string {
    try {
        checkRequest(name, arg);
    } catch (error) {
        expect(error, `${name} ${JSON.stringify(arg)}`).toBeInstanceOf(TensorwiseError);
        expect((error as TensorwiseError).code, `${name} ${JSON.stringify(arg)}`).toBe("bad-request");
        return (error as Error).message;
    }
    throw new Error(`${name} accepted ${JSON.stringify(arg)}`);
}

/** `base` with `key` set to `value` (a nested key as "settings.contextSize"). */
function with_(base: unknown, key: string, value: unknown): unknown {
    const copy = structuredClone(base) as Record<string, Record<string, unknown>>;
    const [outer, inner] = key.split(".") as [string, string | undefined];
    if (inner == null)
        (copy as Record<string, unknown>)[outer] = value;
    else
        copy[outer] = {...copy[outer], [inner]: value};
    return copy;
}

describe("checkRequest: every request is checked at the trust boundary", () => {
    it("accepts a valid argument for every request (none, as web mode's null or IPC's undefined, for those without)", () => {
        for (const name of requestNames) {
            expect(() => checkRequest(name, valid[name]), name).not.toThrow();
            if (valid[name] == null)
                expect(() => checkRequest(name, null), name).not.toThrow();
        }
    });

    it("rejects a wrong type for every request with a coded error", () => {
        const withArgument = requestNames.filter((name) => valid[name] != null && name !== "conversations.create");
        expect(withArgument.length).toBeGreaterThan(10);
        for (const name of withArgument)
            for (const wrong of [42, "x", [], null, true])
                rejects(name, wrong);
        rejects("conversations.create", 42);
        rejects("conversations.create", {title: 7});
        // requests without an argument refuse one: a client sending it is out of step with the contract
        const withoutArgument = requestNames.filter((name) => valid[name] == null);
        expect(withoutArgument).toContain("machine.describe");
        for (const name of withoutArgument)
            for (const wrong of [42, "x", {path: "/m.gguf"}])
                expect(rejects(name, wrong), name).toMatch(/takes no argument/);
    });

    it("refuses an unknown request name with its own code", () => {
        expect(() => checkRequest("model.delete" as RequestName, {})).toThrow(expect.objectContaining({code: "unknown-request"}));
    });

    it("bench.start: refuses what the engine could not run, with the field named", () => {
        const base = valid["bench.start"];
        const bad: [string, unknown, RegExp][] = [
            ["repeats", 0, /repeats/], ["repeats", 1.5, /repeats/], ["repeats", "2", /repeats/], ["genLengths", [1], /genLengths/],
            ["promptLengths", [], /promptLengths/], ["promptLengths", "32", /promptLengths/], ["promptLengths", [100_000], /promptLengths/],
            ["strategies", ["turbo"], /unknown strategies: turbo/], ["strategies", [], /strategies/], ["strategies", "cpu", /strategies/],
            ["budgets", [{kind: "auto"}], /budget/], ["budgets", [{kind: "percent", percent: 150}], /budget/], ["budgets", [7], /budget/],
            ["benchId", "", /benchId/], ["path", "", /path/], ["path", 5, /path/], ["handTuned", "yes", /handTuned/]
        ];
        for (const [key, value, message] of bad)
            expect(rejects("bench.start", with_(base, key, value)), `${key}=${JSON.stringify(value)}`).toMatch(message);
    });

    it("model.load and model.autoOffload: a speculation by name with what goes with it, anything else refused naming the field", () => {
        for (const name of ["model.load", "model.autoOffload"] as const) {
            for (const speculative of [{choice: "auto"}, {choice: "ngram", nMax: 4, ngramSizeN: 3, ngramSizeM: 8}, {choice: "draft", draftPath: "/d.gguf"}])
                expect(() => checkRequest(name, with_(valid[name], "speculative", speculative)), JSON.stringify(speculative)).not.toThrow();
            const bad: [unknown, RegExp][] = [
                ["ngram", /speculative/], [{}, /speculative\.choice/], [{choice: "NGRAM"}, /speculative\.choice/], [{choice: ["ngram"]}, /speculative\.choice/],
                [{choice: "ngram", extra: 1}, /unknown fields/], [{choice: "draft", draftPath: ""}, /speculative\.draftPath/],
                [{choice: "draft", draftPath: 7}, /speculative\.draftPath/], [{choice: "draft"}, /needs the draft model/],
                [{choice: "ngram", draftPath: "/d.gguf"}, /does not use one/], [{choice: "ngram", nMax: 0}, /speculative\.nMax/],
                [{choice: "ngram", nMax: "4"}, /speculative\.nMax/], [{choice: "ngram", nMax: 65}, /speculative\.nMax/], [{choice: "ngram", nMax: 2.5}, /speculative\.nMax/],
                [{choice: "draft", draftPath: "/d.gguf", ngramSizeN: 3}, /n-gram sizes/], [{choice: "ngram", ngramSizeM: 1e6}, /speculative\.ngramSizeM/]
            ];
            for (const [speculative, message] of bad)
                expect(rejects(name, with_(valid[name], "speculative", speculative)), `${name} ${JSON.stringify(speculative)}`).toMatch(message);
        }
    });

    it("model.autoOffload: a llama.cpp command of bounded length and what to load, anything else refused naming the field", () => {
        const name = "model.autoOffload";
        for (const llamaCommand of [{line: "llama-server -ngl 20", load: "plan"}, {line: "llama-bench -ngl 99 -ncmoe 4", load: "command"}])
            expect(checkRequest(name, with_(valid[name], "llamaCommand", llamaCommand))).toMatchObject({llamaCommand});
        const bad: [unknown, RegExp][] = [
            ["llama-server -ngl 20", /llamaCommand/], [{load: "plan"}, /llamaCommand\.line/], [{line: "", load: "plan"}, /llamaCommand\.line/],
            [{line: "   ", load: "plan"}, /not empty/], [{line: 20, load: "plan"}, /llamaCommand\.line/], [{line: ["-ngl", "20"], load: "plan"}, /llamaCommand\.line/],
            // of the right length and shape, but not allowed
            [{line: "x".repeat(16_385), load: "plan"}, /longer than 16384/], [{line: "-ngl 2\u0000", load: "plan"}, /NUL/],
            [{line: "-ngl 2", load: "mine"}, /llamaCommand\.load/], [{line: "-ngl 2", load: "PLAN"}, /llamaCommand\.load/], [{line: "-ngl 2"}, /llamaCommand\.load/],
            [{line: "-ngl 2", load: "plan", run: true}, /unknown fields/]
        ];
        for (const [llamaCommand, message] of bad)
            expect(rejects(name, with_(valid[name], "llamaCommand", llamaCommand)), JSON.stringify(llamaCommand).slice(0, 80)).toMatch(message);
        // loading "command" names the command
        expect(rejects(name, with_(valid[name], "strategy", "command"))).toMatch(/needs "llamaCommand"/);
    });

    it("rejects unknown fields and wrong field types", () => {
        for (const name of requestNames.filter((name) => valid[name] != null))
            expect(rejects(name, with_(valid[name], "__proto__x", 1)), name).toMatch(/unknown fields/);
        rejects("model.load", with_(valid["model.load"], "gpuLayers", "7"));
        rejects("model.autoOffload", with_(valid["model.autoOffload"], "strategy", "fastest"));
        rejects("model.autoOffload", with_(valid["model.autoOffload"], "budget", {kind: "gib", gib: 1}));
        rejects("model.autoOffload", with_(valid["model.autoOffload"], "settings.useMmap", "yes"));
        // every llama.cpp knob: a boolean or null (the planner's choice), of the right shape — never a truthy look-alike
        for (const knob of ["useGpu", "opOffload", "kvOffload", "flashAttention"])
            for (const wrong of ["true", 1, 0, "off", [], {}])
                expect(rejects("model.autoOffload", with_(valid["model.autoOffload"], `settings.${knob}`, wrong)), `${knob}=${JSON.stringify(wrong)}`)
                    .toMatch(new RegExp(`settings\\.${knob}`));
        for (const wrong of ["F16", "q8", "q4_1", "", 8, null as unknown as string])
            if (wrong !== null) expect(rejects("model.autoOffload", with_(valid["model.autoOffload"], "settings.kvCacheType", wrong))).toMatch(/kvCacheType/);
        // a quantized cache without flash attention is refused by name, not left for llama.cpp to fail on
        expect(rejects("model.autoOffload", with_(with_(valid["model.autoOffload"], "settings.kvCacheType", "q8_0"), "settings.flashAttention", false)))
            .toMatch(/needs flash attention/);
        rejects("model.autoOffload", with_(valid["model.autoOffload"], "refreshProfile", "yes"));
        rejects("bench.export", with_(valid["bench.export"], "format", "pdf"));
        rejects("chat.send", with_(valid["chat.send"], "text", "   "));
    });

    it("keeps every number inside the bounds table, with a sentence that says what is allowed", () => {
        const autoOffload = valid["model.autoOffload"];
        for (const contextSize of [-1, 0, 1.5, 2 ** 31, Number.NaN, Number.POSITIVE_INFINITY])
            expect(rejects("model.autoOffload", with_(autoOffload, "settings.contextSize", contextSize)))
                .toMatch(/"contextSize": The context size must be an integer from 64 to 1048576 tokens/);
        expect(rejects("model.autoOffload", with_(autoOffload, "settings.threads", 100_000))).toMatch(/logical cores/);
        expect(rejects("model.autoOffload", with_(autoOffload, "settings.batchSize", 0))).toMatch(/micro-batch size/);
        expect(rejects("model.autoOffload", with_(autoOffload, "budget", {kind: "percent", percent: 0}))).toMatch(/above 0%/);
        expect(rejects("model.autoOffload", with_(autoOffload, "budget", {kind: "mib", mib: -5}))).toMatch(/GPU budget/);
        rejects("model.load", with_(valid["model.load"], "gpuLayers", -1));
        for (const maxTokens of [0, -5, 1e9, 2.5])
            expect(rejects("chat.send", with_(valid["chat.send"], "maxTokens", maxTokens))).toMatch(/max tokens/);
        for (const temperature of [Number.NaN, Number.POSITIVE_INFINITY, -1, 11])
            expect(rejects("chat.regenerate", with_(valid["chat.regenerate"], "temperature", temperature))).toMatch(/temperature/);
        expect(rejects("conversations.rename", with_(valid["conversations.rename"], "title", "x".repeat(1 << 20)))).toMatch(/longer than 200/);
        expect(rejects("chat.send", with_(valid["chat.send"], "text", "x".repeat(300_000)))).toMatch(/longer than/);
        rejects("bench.start", with_(valid["bench.start"], "repeats", 1000));
        rejects("bench.start", with_(valid["bench.start"], "promptLengths", [1e9]));
        const settings = valid["conversations.setSettings"];
        expect(rejects("conversations.setSettings", with_(settings, "settings.topP", 1.5))).toMatch(/top-p/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.topK", 2.5))).toMatch(/top-k/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.minP", -0.1))).toMatch(/min-p/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.repeatPenalty", 100))).toMatch(/repeat penalty/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.stopStrings", Array(17).fill("x")))).toMatch(/at most 16/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.stopStrings", [7]))).toMatch(/stopStrings\[0\]/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.systemPrompt", "x".repeat(40_000)))).toMatch(/longer than/);
        expect(rejects("conversations.setSettings", with_(settings, "settings.color", "red"))).toMatch(/unknown fields/);
        rejects("chat.edit", with_(valid["chat.edit"], "text", " "));
    });

    it("a conversation's context overflow policy: one of the three names exactly, anything else refused by name", () => {
        const settings = valid["conversations.setSettings"];
        for (const policy of ["truncateMiddle", "rollingWindow", "stop"])
            expect(checkRequest("conversations.setSettings", with_(settings, "settings.contextOverflow", policy)))
                .toMatchObject({settings: {contextOverflow: policy}});
        // right length, wrong case, padded, a prototype key, other shapes
        for (const policy of ["truncatemiddle", "TruncateMiddle", "rollingWindoW", " stop", "stop ", "stop\0", "toString", "__proto__", "constructor",
            "", "truncate", 0, 1, true, ["stop"], {policy: "stop"}, "x".repeat(100_000)])
            expect(rejects("conversations.setSettings", with_(settings, "settings.contextOverflow", policy)), JSON.stringify(policy).slice(0, 40))
                .toBe('"contextOverflow" must be one of truncateMiddle, rollingWindow, stop');
        expect(rejects("conversations.create", {settings: {contextOverflow: "middle"}})).toMatch(/"contextOverflow" must be one of/);
        // a reply request cannot choose it (it is the conversation's setting)
        expect(rejects("chat.send", with_(valid["chat.send"], "contextOverflow", "stop"))).toMatch(/unknown fields: "contextOverflow"/);
    });

    it("rpc.add / rpc.remove: an rpc-server as host:port by parseRpcEndpoint's rules, written back in its one form", () => {
        expect(checkRequest("rpc.add", {endpoint: " gpu-box.lan:50052 "})).toEqual({endpoint: "gpu-box.lan:50052"});
        // ggml-rpc's client connects over IPv4 only (transport.cpp socket_t::connect), so an IPv6 address is refused by name
        expect(rejects("rpc.remove", {endpoint: "[fe80::1]:1"})).toMatch(/IPv6 address, and llama\.cpp's RPC client connects over IPv4 only/);
        for (const endpoint of ["gpu-box.lan", "10.0.0.2:0", "10.0.0.2:65536", "http://10.0.0.2:50052", "host name:50052", ""])
            for (const name of ["rpc.add", "rpc.remove"] as const)
                expect(rejects(name, {endpoint}), `${name} ${JSON.stringify(endpoint)}`).toMatch(endpoint === "" ? /"endpoint" must be a non-empty string/ : /is not an rpc-server address: write it as host:port, e\.g\. 127\.0\.0\.1:50052/);
        expect(rejects("rpc.add", {endpoint: 50052})).toMatch(/"endpoint" must be a non-empty string/);
        expect(rejects("rpc.add", {endpoint: `${"a".repeat(300)}:1`})).toMatch(/"endpoint" is longer than/);
        expect(rejects("rpc.add", {endpoint: "10.0.0.2:50052", port: 1})).toMatch(/unknown fields/);
        expect(rejects("rpc.list", {endpoint: "10.0.0.2:50052"})).toMatch(/takes no argument/);
    });

    it("server.set: a port, a parallel count and an address the server can listen on, and switches that are true or false", () => {
        const base = valid["server.set"];
        expect(checkRequest("server.set", {bindAddress: "::1"})).toEqual({bindAddress: "::1"});
        expect(checkRequest("server.set", {bindAddress: "localhost", enabled: false})).toEqual({bindAddress: "localhost", enabled: false});
        expect(rejects("server.set", with_(base, "port", 70_000))).toMatch(/"port": The port must be/);
        expect(rejects("server.set", with_(base, "port", "8080"))).toMatch(/"port"/);
        expect(rejects("server.set", with_(base, "parallel", 0))).toMatch(/parallel sequence count/);
        for (const address of ["my laptop", "example.com", "300.1.1.1", ""])
            expect(rejects("server.set", with_(base, "bindAddress", address)), address).toMatch(/bindAddress/);
        expect(rejects("server.set", with_(base, "enabled", "yes"))).toMatch(/"enabled" must be true or false/);
        expect(rejects("server.set", with_(base, "apiKey", "mine"))).toMatch(/unknown fields/);
    });

    it("server.set: the KV state disk budget is whole MiB within the bounds table, or null for the default share of free space", () => {
        expect(checkRequest("server.set", {kvDiskBudgetMiB: 512})).toEqual({kvDiskBudgetMiB: 512});
        expect(checkRequest("server.set", {kvDiskBudgetMiB: 0})).toEqual({kvDiskBudgetMiB: 0});
        expect(checkRequest("server.set", {kvDiskBudgetMiB: null})).toEqual({kvDiskBudgetMiB: null});
        for (const bad of [-1, 1.5, "512", 1e12, Number.NaN, true, [512]])
            expect(rejects("server.set", {kvDiskBudgetMiB: bad}), String(bad)).toMatch(/"kvDiskBudgetMiB"/);
    });

    it("server.set: a client key's name to add or revoke is 1 to 40 letters, digits, spaces, dots, dashes or underscores", () => {
        expect(checkRequest("server.set", {addClientKey: "editor"})).toEqual({addClientKey: "editor"});
        expect(checkRequest("server.set", {revokeClientKey: "agent 2"})).toEqual({revokeClientKey: "agent 2"});
        expect(checkRequest("server.set", {addClientKey: "Zed-1.0_b"})).toEqual({addClientKey: "Zed-1.0_b"});
        expect(checkRequest("server.set", {addClientKey: "é".repeat(40)})).toEqual({addClientKey: "é".repeat(40)});
        for (const key of ["addClientKey", "revokeClientKey"])
            for (const bad of ["", " lead", "-dash", "a".repeat(41), "x/y", "../up", "tab\tname", "new\nline", "\u202eeditor", "zero\u200bwidth", "<b>", 7, true, ["editor"], {name: "x"}])
                expect(rejects("server.set", {[key]: bad}), `${key} ${JSON.stringify(bad)}`).toMatch(new RegExp(`"${key}"`));
    });
});

describe("checkRequest: the server's allow-list of web origins", () => {
    it("the Server screen's change takes origins in canonical form and refuses the same shapes by name", () => {
        expect(checkRequest("server.set", {corsOrigins: ["HTTP://LocalHost:5173", "https://chat.example.org/"]}))
            .toEqual({corsOrigins: ["http://localhost:5173", "https://chat.example.org"]});
        expect(checkRequest("server.set", {corsOrigins: []})).toEqual({corsOrigins: []});
        for (const bad of [["*"], ["null"], ["http://a.example/path"], "http://a.example", [42], ["ftp://a.example"], Array(33).fill("http://a.example")])
            expect(() => checkRequest("server.set", {corsOrigins: bad}), JSON.stringify(bad).slice(0, 40)).toThrow(/"corsOrigins/);
    });
});
