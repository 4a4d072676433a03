import {describe, expect, it} from "vitest";
import {ERROR_SENTENCES, GGUF_ERROR_SENTENCES, errorSentence, isErrorCode} from "./errorCodes.js";
import {TensorwiseError, toContractError} from "./TensorwiseError.js";

describe("error codes", () => {
    it("every code has one sentence a user can read", () => {
        for (const [code, sentence] of Object.entries(ERROR_SENTENCES)) {
            expect(code).toMatch(/^[a-z]+(-[a-z]+)*$/);
            expect(sentence, code).toMatch(/^[A-Z`].*[.]$/);
        }
        expect(Object.keys(GGUF_ERROR_SENTENCES).every(isErrorCode)).toBe(true);
    });

    it("an error crosses the contract with its code: a coded engine error keeps it, anything else gets the fallback", () => {
        expect(toContractError(new TensorwiseError("no-model", "no model is loaded"))).toEqual({code: "no-model", message: "no model is loaded"});
        class ContextSizeProbe extends Error {
            readonly code = "context-too-large";
        }
        expect(toContractError(new ContextSizeProbe("too big"))).toEqual({code: "context-too-large", message: "too big"});
        const enoent = Object.assign(new Error("ENOENT: no such file"), {code: "ENOENT"});
        expect(toContractError(enoent, "engine-error")).toEqual({code: "engine-error", message: "ENOENT: no such file"});
        expect(toContractError("plain text")).toEqual({code: "internal", message: "plain text"});
    });

    it("a received error keeps a known code; an unknown one or an empty message falls back to words", () => {
        const received = TensorwiseError.fromContract({code: "bad-magic", message: "not a GGUF file (at byte 0)"});
        expect(received).toBeInstanceOf(TensorwiseError);
        expect(received.code).toBe("bad-magic");
        expect(TensorwiseError.fromContract({code: "made-up", message: ""})).toMatchObject({code: "internal", message: errorSentence("internal")});
        expect(new TensorwiseError("busy").message).toBe(errorSentence("busy"));
    });
});
