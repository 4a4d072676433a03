import {describe, expect, it} from "vitest";
import {explainRpcAbort} from "./explainRpcAbort.js";

describe("explainRpcAbort", () => {
    it("names what to do when ggml-rpc aborted on a lost server, and stays silent on other crashes", () => {
        expect(explainRpcAbort("ggml-rpc.cpp:354: GGML_ABORT: Remote RPC server crashed or returned malformed response\n"))
            .toMatch(/rpc-server .*stopped answering.*reload the model without it/);
        expect(explainRpcAbort("ggml-rpc.cpp:547: Failed to connect to 10.0.0.2:50052\n")).toMatch(/^the rpc-server at 10\.0\.0\.2:50052 stopped answering/);
        expect(explainRpcAbort("Segmentation fault")).toBeNull();
    });
});
