/**
 * llama.cpp's own server test suite (build/native/llama.cpp/tools/server/tests: utils.py, conftest.py,
 * unit/test_*.py, as `npm ci` unpacks llama.cpp's source: native/install.mjs), run with pytest against
 * `tensorwise serve` for the endpoints tensorwise serves.
 *
 * utils.py starts a server per test through `LLAMA_SERVER_BIN_PATH`: here scripts/check/llamaServerTests/llama-server.mjs,
 * which translates llama-server's flags into `tensorwise serve`'s (refusing, by name, each one it cannot honour, so a
 * test that needs one fails instead of running against something else) and serves a generated stand-in for the
 * Hugging Face model the test names, written with the test's `--chat-template-file`. The pytest plugin beside it
 * (tensorwise_llama_plugin.py) deselects the tests of ./testing/llamaServerTestSelection.ts with their reasons, and
 * reports each outcome. llama.cpp's files are copied to a temp dir unchanged.
 *
 * Needs a Python 3 with pytest, requests, wget and filelock (Debian 12: python3-pytest python3-requests python3-wget
 * python3-filelock; .ci/run installs them) and the built CLI (`npm run build`). Skips with the reason printed where
 * either is missing, and fails instead in CI (requiredOrSkip.ts).
 */
import {spawn, spawnSync} from "node:child_process";
import {cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {freePort} from "../../engine/testing/freePort.js";
import {
    LLAMA_EXCLUDED_TESTS, LLAMA_FILES_NOT_RUN, LLAMA_TEST_FILES, LLAMA_TESTS_ALLOWED_SKIPS
} from "../testing/llamaServerTestSelection.js";

const LLAMA = path.resolve("build/native/llama.cpp");
const TESTS = path.join(LLAMA, "tools/server/tests");
const SCRIPTS = path.resolve("scripts/check/llamaServerTests");
const CLI = path.resolve("dist/electron/cli/main.js");
/** What utils.py and conftest.py import beside pytest (numpy and aiohttp only some excluded files). */
const PYTHON_MODULES = ["pytest", "requests", "wget", "filelock"];
/** pytest-xdist workers, where it is installed (Debian: python3-pytest-xdist). */
const WORKERS = 2;
/** The whole pytest run: about 1 s per server start on an idle 2-core machine. */
const RUN_TIMEOUT_MS = 540_000;

/** The first Python 3 that imports {@link PYTHON_MODULES}, or why none does. */
function findPython(): {python: string; xdist: boolean; reason: null} | {python: null; reason: string} {
    const candidates = [process.env.TENSORWISE_PYTHON, "python3", "/usr/bin/python3"].filter((name): name is string => name != null);
    const tried: string[] = [];
    for (const python of candidates) {
        const probe = spawnSync(python, ["-c", `import ${PYTHON_MODULES.join(", ")}`], {encoding: "utf8", timeout: 30_000});
        if (probe.status === 0)
            return {python, xdist: spawnSync(python, ["-c", "import xdist"], {timeout: 30_000}).status === 0, reason: null};
        tried.push(`${python}: ${probe.error?.message ?? probe.stderr.trim().split("\n").at(-1)}`);
    }
    return {python: null, reason: `no Python 3 with ${PYTHON_MODULES.join(", ")} (apt-get install python3-pytest python3-requests python3-wget python3-filelock): ${tried.join("; ")}`};
}

const found = findPython();
const missing = found.reason ?? (!existsSync(path.join(TESTS, "utils.py")) ? `${TESTS} is missing (npm ci unpacks llama.cpp's source: native/install.mjs)`
    : !existsSync(CLI) ? `${CLI} is missing (npm run build)` : null);
const skip = requiredOrSkip("llama.cpp's server tests", missing);

type Outcome = {test: string; when: string; outcome: "passed" | "failed" | "skipped"; reason?: string; message?: string};
type Report = {openaiMissing: boolean; outcomes: Outcome[]};

describe.skipIf(skip != null)("llama.cpp's server tests against tensorwise serve", () => {
    const work = mkdtempSync(path.join(os.tmpdir(), "tensorwise-llama-tests-"));
    afterAll(() => rmSync(work, {recursive: true, force: true}));

    it("every selected test passes, or skips for a listed reason", async () => {
        // the tests name templates as ../../../models/templates/X.jinja from tools/server/tests
        const tests = path.join(work, "tools/server/tests");
        mkdirSync(path.dirname(tests), {recursive: true});
        cpSync(TESTS, tests, {recursive: true});
        symlinkSync(path.join(LLAMA, "models"), path.join(work, "models"));
        const excluded = path.join(work, "excluded.json");
        writeFileSync(excluded, JSON.stringify(LLAMA_EXCLUDED_TESTS));
        const reportFile = path.join(work, "report.json");
        // two workers where pytest-xdist is installed: a server start is mostly one core's work, and there are two
        const workers = found.python != null && found.xdist ? ["-n", String(WORKERS)] : [];
        const ports = await Promise.all(Array.from({length: WORKERS}, () => freePort()));
        const args = ["-m", "pytest", "-p", "tensorwise_llama_plugin", "-p", "no:cacheprovider", "-m", "not slow", "-q", "-rfs", ...workers,
            ...LLAMA_TEST_FILES.map((file) => `unit/${file}`)];
        const env = {...process.env, LLAMA_SERVER_BIN_PATH: path.join(SCRIPTS, "llama-server.mjs"), PORT: String(ports[0]), TENSORWISE_LLAMA_PORTS: ports.join(","),
            PYTHONPATH: SCRIPTS, TENSORWISE_LLAMA_EXCLUDED: excluded, TENSORWISE_LLAMA_REPORT: reportFile,
            TENSORWISE_SHIM_MODELS: path.join(work, "models-generated"), PYTHONDONTWRITEBYTECODE: "1"};
        const started = performance.now();
        // its own process group: a run past its time is killed with every server it started
        const child = spawn(found.python!, args, {cwd: tests, env, stdio: ["ignore", "pipe", "pipe"], detached: true});
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => output += chunk.toString());
        child.stderr.on("data", (chunk: Buffer) => output += chunk.toString());
        const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), RUN_TIMEOUT_MS);
        const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
        clearTimeout(timer);
        const seconds = (performance.now() - started) / 1000;
        expect(existsSync(reportFile), `pytest wrote no report (exit ${status}):\n${output.slice(-8000)}`).toBe(true);
        const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
        const deselected = JSON.parse(readFileSync(`${reportFile}.deselected`, "utf8")) as {test: string; reason: string}[];

        const calls = report.outcomes.filter((entry) => entry.when === "call" || entry.outcome !== "passed");
        const failed = calls.filter((entry) => entry.outcome === "failed");
        const skipped = calls.filter((entry) => entry.outcome === "skipped");
        const passed = calls.filter((entry) => entry.when === "call" && entry.outcome === "passed");
        const badSkips = skipped.filter((entry) => !LLAMA_TESTS_ALLOWED_SKIPS.includes(entry.reason ?? ""));
        console.info(`llama.cpp's server tests against tensorwise serve in ${seconds.toFixed(0)} s: ${passed.length} passed, ` +
            `${skipped.length} skipped (${report.openaiMissing ? "the Python openai package is missing" : "openai installed"}), ` +
            `${failed.length} failed; ${deselected.length} excluded by name (llamaServerTestSelection.ts), ` +
            `${LLAMA_FILES_NOT_RUN.length} files not run`);
        expect(failed.map((entry) => `${entry.test} (${entry.when}): ${entry.message}`), output.slice(-4000)).toEqual([]);
        expect(badSkips.map((entry) => `${entry.test}: ${entry.reason}`)).toEqual([]);
        expect(status).toBe(0);
        expect(passed.length).toBeGreaterThan(0);
    }, RUN_TIMEOUT_MS + 30_000);
});
