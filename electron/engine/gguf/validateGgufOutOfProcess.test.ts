import {mkdtemp, rm, writeFile} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {GgufValidationError} from "./errors/GgufValidationError.js";
import {writeMalformedGgufCorpus} from "./testing/malformedGgufCorpus.js";
import type {MalformedGgufCase} from "./testing/malformedGgufCorpus.js";
import {buildTinyGguf, kv, tinyLlamaSpec} from "./testing/tinyGguf.js";
import {validateGgufFileSync} from "./validateGguf.js";
import {validateGgufOutOfProcess as validateIsolated} from "./validateGgufOutOfProcess.js";
import type {ValidateGgufOutOfProcessOptions, ValidatorIsolation} from "./validateGgufOutOfProcess.js";

let dir: string;
let corpus: MalformedGgufCase[];
let validPath: string;

async function rejectionOf(promise: Promise<unknown>): Promise<GgufValidationError> {
    try {
        await promise;
    } catch (error) {
        if (error instanceof GgufValidationError)
            return error;
        throw error;
    }
    throw new Error("expected a GgufValidationError, but the file was accepted");
}

beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "validate-gguf-oop-"));
    corpus = await writeMalformedGgufCorpus(dir);
    validPath = join(dir, "valid.gguf");
    await writeFile(validPath, buildTinyGguf(tinyLlamaSpec()).bytes);
});

afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

let slowVocab: Promise<string> | undefined;
/** 600k distinct tokens: about 1.5 s of validation on the 2-core CI VM (measured in-process), 5x a 300 ms limit. */
function slowVocabPath(): Promise<string> {
    slowVocab ??= (async () => {
        const tokens = Array.from({length: 600_000}, (_, i) => `slow token ${i} `.padEnd(40, "y"));
        const path = join(dir, "slow-vocab.gguf");
        await writeFile(path, buildTinyGguf({kvs: [kv.strings("tokenizer.ggml.tokens", tokens)]}).bytes);
        return path;
    })();
    return slowVocab;
}

// Every guarantee holds for both isolations: a child process (plain Node) and a worker thread (Electron's utility process).
describe.each<ValidatorIsolation>(["process", "thread"])("validateGgufOutOfProcess in a %s", (isolation) => {
    const validateGgufOutOfProcess = (path: string, options: ValidateGgufOutOfProcessOptions = {}) =>
        validateIsolated(path, {...options, isolation});

    it("returns exactly what in-process validation returns, ggml type objects included", async () => {
        const result = await validateGgufOutOfProcess(validPath);
        const inProcess = validateGgufFileSync(validPath);
        expect(result).toEqual(inProcess);
        expect(result.tensors[0]?.type).toBe(inProcess.tensors[0]?.type);
        expect(typeof result.dataOffset).toBe("bigint");
        expect(result.metadata).toBeInstanceOf(Map);
    });

    it("rejects every corpus file with the in-process code and message, none near the time limit", async () => {
        const slowest = {name: "", ms: 0};
        for (const testCase of corpus) {
            const started = performance.now();
            const error = await rejectionOf(validateGgufOutOfProcess(testCase.path));
            const elapsed = performance.now() - started;
            if (elapsed > slowest.ms)
                Object.assign(slowest, {name: testCase.name, ms: elapsed});
            expect({name: testCase.name, code: error.code}).toEqual({name: testCase.name, code: testCase.expectedCode});
            let inProcessMessage = "";
            try {
                validateGgufFileSync(testCase.path);
            } catch (inProcess) {
                inProcessMessage = inProcess instanceof Error ? inProcess.message : "";
            }
            expect(error.message).toBe(inProcessMessage);
        }
        console.info(`slowest out-of-process rejection: ${slowest.ms.toFixed(0)} ms (${slowest.name})`);
        // no time bound here: a child that hung on a file is stopped at the time limit, and its "timeout" code fails the
        // comparison above (a bound in ms flaked on a busy CI machine: 1.17 s)
    });

    it("kills a child that runs past the time limit", async () => {
        const error = await rejectionOf(validateGgufOutOfProcess(validPath, {timeoutMs: 1}));
        expect(error.code).toBe("timeout");
    });

    it("stops a validation that is still running at the time limit, and answers at that limit", async () => {
        const path = await slowVocabPath();
        const started = performance.now();
        const error = await rejectionOf(validateGgufOutOfProcess(path, {timeoutMs: 300, maxMetadataBytes: 2 ** 40, maxOldSpaceSizeMb: 1024}));
        expect(error.code).toBe("timeout");
        // at the 300 ms limit, not when the validation would have ended; the margin is a busy machine's process start
        expect(performance.now() - started).toBeLessThan(5_000);
    });

    it("reports a child that runs out of heap as out-of-memory", async () => {
        // 300k distinct tokens with the metadata budget lifted: far more than a 16 MiB heap holds.
        const tokens = Array.from({length: 300_000}, (_, i) => `token number ${i} `.padEnd(40, "x"));
        const path = join(dir, "big-vocab.gguf");
        await writeFile(path, buildTinyGguf({kvs: [kv.strings("tokenizer.ggml.tokens", tokens)]}).bytes);
        const error = await rejectionOf(validateGgufOutOfProcess(path, {
            maxOldSpaceSizeMb: 16, maxMetadataBytes: 2 ** 40, timeoutMs: 20_000
        }));
        expect(error.code).toBe("out-of-memory");
    });

    it("stops when the signal aborts", async () => {
        const controller = new AbortController();
        const pending = validateGgufOutOfProcess(validPath, {signal: controller.signal});
        controller.abort(new Error("user cancelled"));
        await expect(pending).rejects.toThrow("user cancelled");
    });

    it("reports a missing file as io-error", async () => {
        expect((await rejectionOf(validateGgufOutOfProcess(join(dir, "missing.gguf")))).code).toBe("io-error");
    });
});
