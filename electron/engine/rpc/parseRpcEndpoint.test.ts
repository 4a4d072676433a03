import {describe, expect, it} from "vitest";
import {parseRpcEndpoint} from "./parseRpcEndpoint.js";

const NOT_AN_ADDRESS = /is not an rpc-server address: write it as host:port, e\.g\. 127\.0\.0\.1:50052/;

describe("parseRpcEndpoint", () => {
    it("accepts IPv4 host:port and host names, in one canonical form", () => {
        expect(parseRpcEndpoint("127.0.0.1:50052")).toEqual({host: "127.0.0.1", port: 50052, text: "127.0.0.1:50052"});
        expect(parseRpcEndpoint(" lender.local:1 ").text).toBe("lender.local:1");
        expect(parseRpcEndpoint("gpu-box:00080").text).toBe("gpu-box:80");
        expect(parseRpcEndpoint(`${"a".repeat(63)}.lan:65535`).port).toBe(65535);
    });

    it("refuses what ggml-rpc would abort on, with the expected form in the message", () => {
        for (const bad of ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", ":50052", "host:port", "a b:1", "x:1;rm", "",
            "127.0.0.1:50052 extra", "127.0.0.1:+1", "127.0.0.1:-1", "127.0.0.1: 1", "127.0.0.1:１", "127.0.0.1:123456",
            // the right length or shape, the wrong content
            "999.0.0.1:50052", "1.2.3:50052", "1.2.3.4.5:50052", "-host:1", "host-:1", "a..b:1", ".a:1", "a.:1", "a_b:1",
            "hôte:1", `${"a".repeat(64)}:1`, `${"a.".repeat(127)}a:1`, "127.0.0.1:50052\u0000", "%00:1", "$(id):1"])
            expect(() => parseRpcEndpoint(bad), JSON.stringify(bad)).toThrow(NOT_AN_ADDRESS);
    });

    it("refuses IPv6 by name: ggml-rpc splits at the first ':' and connects over IPv4 only", () => {
        for (const bad of ["[::1]:50052", "::1:50052", "[fe80::1%eth0]:1", "[]:1", "[127.0.0.1]:1", "a:b:1"])
            expect(() => parseRpcEndpoint(bad), bad).toThrow(/IPv6 address, and llama\.cpp's RPC client connects over IPv4 only/);
    });

    it("refuses values that are not text in one sentence instead of a TypeError", () => {
        for (const bad of [undefined, null, 50052, true, {}, ["127.0.0.1:50052"], {toString: () => "127.0.0.1:1"}])
            expect(() => parseRpcEndpoint(bad), String(bad)).toThrow(/^an rpc-server address must be text: write it as host:port/);
    });

    it("keeps an attacker's long input out of the message", () => {
        const long = "a".repeat(100_000) + ":1";
        expect(() => parseRpcEndpoint(long)).toThrow(/^"a{80}" is not an rpc-server address/);
    });
});
