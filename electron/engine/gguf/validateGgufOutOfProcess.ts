import {fork} from "node:child_process";
import {existsSync} from "node:fs";
import {fileURLToPath} from "node:url";
import {Worker} from "node:worker_threads";
import {GgufValidationError} from "./errors/GgufValidationError.js";
import {getGgmlType} from "./ggmlTypes.js";
import type {ValidatedGguf, ValidatedGgufTensor, ValidateGgufOptions} from "./types/ValidatedGguf.js";
import {isValidateGgufResponse} from "./validate/childProtocol.js";
import type {ValidateGgufRequest, ValidateGgufResponse} from "./validate/childProtocol.js";
import {transpileForChild} from "./validate/transpileForChild.js";

const defaultTimeoutMs = 5_000;
const defaultMaxOldSpaceSizeMb = 256;
/** Metadata budget inside the child: half its heap, leaving room for tensor infos and the reply's copy. */
const defaultChildMaxMetadataBytes = 128 * 2 ** 20;
const stderrTailBytes = 4096;

/**
 * Where the validator runs: a child process (`child_process.fork` of this Node binary) or a worker thread with
 * `resourceLimits`. Under Electron (the engine is a utility process) forking `process.execPath` would need the
 * RunAsNode fuse, which the app turns off, so a worker thread is the default there.
 */
export type ValidatorIsolation = "process" | "thread";

/** Options of `validateGgufOutOfProcess`. */
export type ValidateGgufOutOfProcessOptions = ValidateGgufOptions & {
    /** Kill the child and reject with code `timeout` after this long (child start-up included). Defaults to 5000. */
    timeoutMs?: number;
    /** V8 old-space limit of the child (`--max-old-space-size`) or worker (`maxOldGenerationSizeMb`), in MiB. Defaults to 256. */
    maxOldSpaceSizeMb?: number;
    /** Defaults to `"thread"` under Electron, else `"process"`. */
    isolation?: ValidatorIsolation;
    /** Kills the child and rejects with `signal.reason`. */
    signal?: AbortSignal;
};

/**
 * `validateGgufFile` in a child process or worker thread with a time and memory limit, so a file that defeats the
 * validator can cost at most a killed child. Rejects with a `GgufValidationError`: the file's own error, or `timeout`, `out-of-memory`
 * or `child-failed`. `maxMetadataBytes` defaults to 128 MiB here (half the child's default heap).
 */
export async function validateGgufOutOfProcess(
    path: string, options: ValidateGgufOutOfProcessOptions = {}
): Promise<ValidatedGguf> {
    const {
        timeoutMs = defaultTimeoutMs, maxOldSpaceSizeMb = defaultMaxOldSpaceSizeMb, signal,
        isolation = process.versions.electron === undefined ? "process" : "thread", ...limits
    } = options;
    signal?.throwIfAborted();
    let entry: string;
    try {
        entry = await resolveChildEntry();
    } catch (error) {
        throw new GgufValidationError("child-failed", `cannot prepare the validator child: ${String(error)}`);
    }
    signal?.throwIfAborted();
    const request: ValidateGgufRequest = {
        path,
        options: {...limits, maxMetadataBytes: limits.maxMetadataBytes ?? defaultChildMaxMetadataBytes}
    };
    const response = await (isolation === "thread" ? runWorker : runChild)(entry, request, timeoutMs, maxOldSpaceSizeMb, signal);
    if (!response.ok)
        throw new GgufValidationError(response.error.code, response.error.detail, response.error.offset);
    return rehydrate(response.result);
}

/**
 * In a packaged app: the one-file bundle (scripts/buildValidatorBundle.mjs) from `app.asar.unpacked` (package.json
 * build.asarUnpack: neither a forked Node nor a worker thread reads inside app.asar). From `dist/`: the compiled
 * sibling. From TypeScript sources (tests): a transpiled copy.
 */
async function resolveChildEntry(): Promise<string> {
    const bundle = fileURLToPath(new URL("./validate/validateGgufChild.bundle.mjs", import.meta.url));
    const unpackedBundle = bundle.replace(/\.asar([/\\])/, ".asar.unpacked$1");
    if (unpackedBundle !== bundle && existsSync(unpackedBundle))
        return unpackedBundle;
    const compiled = fileURLToPath(new URL("./validate/validateGgufChild.js", import.meta.url));
    if (import.meta.url.endsWith(".js") && existsSync(compiled))
        return compiled;
    return transpileForChild(fileURLToPath(new URL("./validate/validateGgufChild.ts", import.meta.url)));
}

function runChild(
    entry: string, request: ValidateGgufRequest, timeoutMs: number, maxOldSpaceSizeMb: number, signal?: AbortSignal
): Promise<ValidateGgufResponse> {
    return new Promise((resolvePromise, reject) => {
        const child = fork(entry, [], {
            execArgv: [`--max-old-space-size=${maxOldSpaceSizeMb}`],
            serialization: "advanced",
            stdio: ["ignore", "ignore", "pipe", "ipc"]
        });
        let stderr = "";
        const {finish, fail} = settleOnce({
            request, timeoutMs, signal, reject, stoppedVerb: "killed", stop: () => {
                if (child.exitCode === null && child.signalCode === null)
                    child.kill("SIGKILL");
            }
        });

        child.stderr?.on("data", (chunk: Buffer) => {
            stderr = (stderr + chunk.toString("utf8")).slice(-stderrTailBytes);
        });
        child.on("message", (message: unknown) => {
            if (isValidateGgufResponse(message))
                finish(() => resolvePromise(message));
            else
                fail("child-failed", "the validator child sent a malformed reply");
        });
        child.on("error", (error) => fail("child-failed", `could not run the validator child: ${error.message}`));
        child.on("close", (code, exitSignal) => {
            if (/heap limit|out of memory/i.test(stderr))
                fail("out-of-memory", `validating ${request.path} needed more than ${maxOldSpaceSizeMb} MiB`);
            else
                fail("child-failed", `the validator child exited (${exitSignal ?? `code ${code}`}) without a reply` +
                    (stderr === "" ? "" : `: ${stderr.trim()}`));
        });
        child.send(request, (error) => {
            if (error !== null)
                fail("child-failed", `could not send the request to the validator child: ${error.message}`);
        });
    });
}

function runWorker(
    entry: string, request: ValidateGgufRequest, timeoutMs: number, maxOldSpaceSizeMb: number, signal?: AbortSignal
): Promise<ValidateGgufResponse> {
    return new Promise((resolvePromise, reject) => {
        const worker = new Worker(entry, {resourceLimits: {maxOldGenerationSizeMb: maxOldSpaceSizeMb}, stdout: true, stderr: true});
        // terminate() stops running JavaScript at once; the reply (if any) is already here
        const {finish, fail} = settleOnce({request, timeoutMs, signal, reject, stoppedVerb: "stopped", stop: () => void worker.terminate()});

        worker.on("message", (message: unknown) => {
            if (isValidateGgufResponse(message))
                finish(() => resolvePromise(message));
            else
                fail("child-failed", "the validator worker sent a malformed reply");
        });
        worker.on("error", (error: Error & {code?: string}) => {
            if (error.code === "ERR_WORKER_OUT_OF_MEMORY")
                fail("out-of-memory", `validating ${request.path} needed more than ${maxOldSpaceSizeMb} MiB`);
            else
                fail("child-failed", `the validator worker failed: ${error.message}`);
        });
        worker.on("exit", (code) => fail("child-failed", `the validator worker exited (code ${code}) without a reply`));
        worker.postMessage(request);
    });
}

type FailureCode = "timeout" | "out-of-memory" | "child-failed";

/**
 * The settle-once bookkeeping both isolations share: the first outcome wins, and settling clears the time limit,
 * drops the abort listener and stops the child or worker (`stop`). A timeout or an abort settles it too.
 */
function settleOnce({request, timeoutMs, signal, reject, stop, stoppedVerb}: {
    request: ValidateGgufRequest; timeoutMs: number; signal?: AbortSignal; reject: (reason: unknown) => void;
    stop: () => void; stoppedVerb: string;
}): {finish: (outcome: () => void) => void; fail: (code: FailureCode, detail: string) => void} {
    let settled = false;
    const finish = (outcome: () => void): void => {
        if (settled)
            return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        stop();
        outcome();
    };
    const fail = (code: FailureCode, detail: string): void => finish(() => reject(new GgufValidationError(code, detail)));
    const onAbort = (): void => finish(() => reject(signal?.reason));
    const timer = setTimeout(
        () => fail("timeout", `validating ${request.path} took longer than ${timeoutMs} ms; the validator was ${stoppedVerb}`),
        timeoutMs
    );
    signal?.addEventListener("abort", onAbort, {once: true});
    return {finish, fail};
}

/** Structured clone gives back plain objects: restore canonical ggml type infos (and check the reply's shape). */
function rehydrate(result: ValidatedGguf): ValidatedGguf {
    const tensors = result.tensors.map((tensor): ValidatedGgufTensor => {
        const type = getGgmlType(tensor.type.id);
        if (type === undefined)
            throw new GgufValidationError("child-failed", `validator child returned unknown ggml type ${tensor.type.id}`);
        return {...tensor, type};
    });
    return {...result, tensors};
}
