#!/usr/bin/env node
// Builds llama.cpp's RPC backend (libggml-rpc.so, a dlopen'ed backend like libggml-vulkan.so) and its rpc-server
// against the prebuilt libraries of each installed node-llama-cpp local build, from the same llama.cpp source
// (build/native/llama.cpp, extracted by native/install.mjs). Both are placed in the local build's Release folder:
// node-llama-cpp's `ggml_backend_load_all_from_path(<addon folder>)` then registers the RPC backend in the app's own
// process, and rpc-server's `ggml_backend_load_all()` finds the CPU/Vulkan/CUDA backends beside itself.
//
// Cached per llama.cpp commit + variant in build/native/rpc/ (≈20 s to build on 2 cores, nothing when cached) and
// idempotent: run from native/install.mjs after the addon builds, or alone with `node native/buildRpc.mjs [--force]`.
import {spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

const nativeDir = path.dirname(fileURLToPath(import.meta.url));
const rootDir = path.dirname(nativeDir);
const llamaSrc = path.join(rootDir, "build", "native", "llama.cpp");
const cacheRoot = path.join(rootDir, "build", "native", "rpc");
const localBuildsDir = path.join(rootDir, "node_modules", "node-llama-cpp", "llama", "localBuilds");

/** Files this module puts into each local build's Release folder. */
export const RPC_FILES = ["libggml-rpc.so", "rpc-server"];

function log(message) {
    console.log(`[tensorwise native] rpc: ${message}`);
}

function fail(message) {
    console.error(`\n[tensorwise native] ERROR: rpc: ${message}\n`);
    process.exit(1);
}

function compile(args, cwd) {
    const result = spawnSync("g++", args, {cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"]});
    if (result.error != null)
        fail(`could not run g++: ${result.error.message}`);
    if (result.status !== 0)
        fail(`g++ ${args.join(" ")} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
}

function llamaCppCommit() {
    const result = spawnSync("git", ["-C", llamaSrc, "rev-parse", "HEAD"], {encoding: "utf8"});
    if (result.status !== 0)
        fail(`cannot read the llama.cpp commit of ${llamaSrc} (run native/install.mjs first)`);
    return result.stdout.trim();
}

function sha256(file) {
    return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** Builds (or reuses) the RPC files for one local build folder; returns the cache folder holding them. */
function buildFor(folder, commit, force) {
    const releaseDir = path.join(localBuildsDir, folder, "Release");
    const libGgml = fs.readdirSync(releaseDir).find((name) => /^libggml\..*so$/.test(name));
    if (libGgml == null || !fs.existsSync(path.join(releaseDir, "libggml-base.so")))
        fail(`${releaseDir} has no libggml/libggml-base to build against`);
    const key = createHash("sha256")
        .update(commit).update(folder)
        .update(fs.readFileSync(fileURLToPath(import.meta.url)))
        .update(sha256(path.join(releaseDir, "libggml-base.so")))
        .update(sha256(path.join(releaseDir, libGgml)))
        .digest("hex").slice(0, 16);
    const cacheDir = path.join(cacheRoot, `${commit.slice(0, 12)}-${folder}-${key}`);
    if (!force && RPC_FILES.every((name) => fs.existsSync(path.join(cacheDir, name))))
        return {cacheDir, built: false};

    const started = Date.now();
    const tmpDir = cacheDir + ".tmp";
    fs.rmSync(tmpDir, {recursive: true, force: true});
    fs.mkdirSync(tmpDir, {recursive: true});
    const common = ["-O2", "-DNDEBUG", "-std=c++17", "-pthread", "-I" + path.join(llamaSrc, "ggml", "include")];
    // source: ggml/src/ggml-rpc/CMakeLists.txt (ggml_add_backend_library) with GGML_BACKEND_DL, no RDMA transport
    compile([
        ...common, "-shared", "-fPIC",
        "-DGGML_BACKEND_DL", "-DGGML_BACKEND_BUILD", "-DGGML_BACKEND_SHARED", "-DGGML_SHARED",
        "-I" + path.join(llamaSrc, "ggml", "src"), "-I" + path.join(llamaSrc, "ggml", "src", "ggml-rpc"),
        path.join(llamaSrc, "ggml", "src", "ggml-rpc", "ggml-rpc.cpp"),
        path.join(llamaSrc, "ggml", "src", "ggml-rpc", "transport.cpp"),
        path.join(releaseDir, "libggml-base.so"),
        "-Wl,-rpath,$ORIGIN", "-o", path.join(tmpDir, "libggml-rpc.so")
    ]);
    // source: tools/rpc/CMakeLists.txt (ggml-rpc-server links ggml only; backends are loaded at run time)
    compile([
        ...common,
        path.join(llamaSrc, "tools", "rpc", "rpc-server.cpp"),
        path.join(releaseDir, libGgml), path.join(releaseDir, "libggml-base.so"),
        "-Wl,-rpath,$ORIGIN", "-o", path.join(tmpDir, "rpc-server")
    ]);
    fs.rmSync(cacheDir, {recursive: true, force: true});
    fs.renameSync(tmpDir, cacheDir);
    log(`${folder}: built libggml-rpc.so and rpc-server in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return {cacheDir, built: true};
}

/**
 * Builds the RPC backend and rpc-server for every installed local build (or those named in
 * `TENSORWISE_NATIVE_VARIANTS`' folders) and copies them into its Release folder. Skips quietly when there is no
 * local build yet; fails loudly when a compile fails.
 */
export function buildRpc({force = process.argv.includes("--force")} = {}) {
    if (!fs.existsSync(localBuildsDir) || !fs.existsSync(path.join(llamaSrc, "ggml", "src", "ggml-rpc", "ggml-rpc.cpp"))) {
        log("no local build or llama.cpp source yet, skipped");
        return;
    }
    const commit = llamaCppCommit();
    for (const folder of fs.readdirSync(localBuildsDir).sort()) {
        const releaseDir = path.join(localBuildsDir, folder, "Release");
        if (!fs.existsSync(path.join(releaseDir, "llama-addon.node")))
            continue;
        const {cacheDir, built} = buildFor(folder, commit, force);
        let copied = 0;
        for (const name of RPC_FILES) {
            const target = path.join(releaseDir, name);
            if (fs.existsSync(target) && sha256(target) === sha256(path.join(cacheDir, name)))
                continue;
            fs.copyFileSync(path.join(cacheDir, name), target);
            fs.chmodSync(target, 0o755);
            copied++;
        }
        if (!built)
            log(`${folder}: ${copied === 0 ? "up to date" : "installed from the cache"}`);
    }
}

if (process.argv[1] != null && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
    buildRpc();
