import {describe, expect, it} from "vitest";
import {ERROR_FIXES, ERROR_SENTENCES, GGUF_ERROR_SENTENCES, errorSentence, isErrorCode, isMalformedFileCode, type ErrorCode} from "./errorCodes.js";
import {humanError, TensorwiseError, toContractError} from "./TensorwiseError.js";

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

describe("human error messages", () => {
    it("every fix is one sentence for a known code, and every error a user can hit has one", () => {
        for (const [code, fix] of Object.entries(ERROR_FIXES)) {
            expect(isErrorCode(code), code).toBe(true);
            expect(fix, code).toMatch(/^[A-Z].*[.]$/);
            expect(fix!.slice(0, -1), code).not.toMatch(/[.!?] [A-Z]/);
        }
        // a malformed file, the disk, memory, the GPU build, the engine process, paths: what a user meets
        const userFacing: ErrorCode[] = [
            ...Object.keys(GGUF_ERROR_SENTENCES) as ErrorCode[], "disk-full", "too-large", "upload-aborted", "not-enough-memory",
            "load-failed", "context-too-large", "no-backend", "engine-crashed", "not-found", "path-not-allowed", "bad-name", "no-model"
        ];
        expect(userFacing.filter((code) => ERROR_FIXES[code] == null)).toEqual([]);
    });

    it("a malformed GGUF reads as a sentence and a fix; the validator's words and byte offsets are the detail", () => {
        const human = humanError({code: "bad-magic", message: "magic is \"hell\", expected \"GGUF\" (at byte 0)"});
        expect(human.sentence).toBe("This is not a GGUF file.");
        expect(human.fix).toMatch(/^Open the \.gguf model file itself/);
        expect(`${human.sentence} ${human.fix}`).not.toMatch(/byte|magic|"GGUF"/);
        expect(human.detail).toBe("magic is \"hell\", expected \"GGUF\" (at byte 0)");
    });

    it("the detail names the user's file where the message named the app's copy of it", () => {
        const copy = "/home/u/.tensorwise/models/broken (2).gguf";
        const human = humanError({code: "out-of-bounds", message: `${copy}: tensor blk.0.attn_q.weight ends at byte 9000, past the end (4096 bytes)`},
            {copyPath: copy, name: "broken.gguf"});
        expect(human.detail).toBe("broken.gguf: tensor blk.0.attn_q.weight ends at byte 9000, past the end (4096 bytes)");
        expect(humanError({code: "io-error", message: "cannot read broken (2).gguf"}, {copyPath: copy, name: "broken.gguf"}).detail)
            .toBe("cannot read broken.gguf");
    });

    it("a message that only repeats the sentence has no detail, and a code without a fix says nothing more", () => {
        expect(humanError(new TensorwiseError("aborted").toContract())).toEqual({code: "aborted", sentence: errorSentence("aborted"), fix: null, detail: null});
    });

    it("only verdicts on the file count as malformed, not failures to check it", () => {
        expect(isMalformedFileCode("bad-magic")).toBe(true);
        expect(isMalformedFileCode("duplicate-token")).toBe(true);
        for (const code of ["io-error", "timeout", "out-of-memory", "child-failed", "not-found", "made-up"])
            expect(isMalformedFileCode(code), code).toBe(false);
    });
});
