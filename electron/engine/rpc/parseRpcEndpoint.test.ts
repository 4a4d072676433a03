import {describe, expect, it} from "vitest";
import {parseRpcEndpoint} from "./parseRpcEndpoint.js";

describe("parseRpcEndpoint", () => {
    it("accepts host:port, host names and bracketed IPv6", () => {
        expect(parseRpcEndpoint("127.0.0.1:50052")).toEqual({host: "127.0.0.1", port: 50052, text: "127.0.0.1:50052"});
        expect(parseRpcEndpoint(" lender.local:1 ").text).toBe("lender.local:1");
        expect(parseRpcEndpoint("[::1]:50052")).toEqual({host: "::1", port: 50052, text: "[::1]:50052"});
    });

    it("refuses what ggml-rpc would abort on, with the expected form in the message", () => {
        for (const bad of ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", ":50052", "::1:50052", "host:port", "a b:1", "x:1;rm"])
            expect(() => parseRpcEndpoint(bad), bad).toThrow(/write it as host:port, e\.g\. 127\.0\.0\.1:50052/);
    });
});
