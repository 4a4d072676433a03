#!/usr/bin/env node
// Installs tensorwise's patch to node-llama-cpp: per-tensor buffer-type overrides, buffer-type listing and llama.cpp's
// per-buffer-type memory breakdown. Runs from `npm install` (postinstall) and `npm run native` (--force).
//
// 1. Checks node-llama-cpp is exactly the version the patch was written for.
// 2. Patches its JS (option forwarding + no-alloc simulation) in node_modules, idempotently.
// 3. For each prebuilt variant present (cpu, vulkan, cuda), builds ONLY the addon against the prebuilt llama.cpp
//    libraries (headers from the llama.cpp git bundle that ships with node-llama-cpp), and installs it as a
//    node-llama-cpp local build, which getLlama() prefers over prebuilt binaries.
// 4. Loads each built addon in a child process and checks it exposes the tensorwise extension.
//
// Everything fails loudly: a silently unpatched binary would ignore a placement plan.
import {execFileSync, spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

const EXPECTED_NODE_LLAMA_CPP_VERSION = "3.22.1";
const EXT_VERSION = 6; // keep in sync with TENSORWISE_EXT_VERSION in native/src/TensorwiseExt.h

const nativeDir = path.dirname(fileURLToPath(import.meta.url));
const rootDir = path.dirname(nativeDir);
const buildDir = path.join(rootDir, "build", "native");
const nlcDir = path.join(rootDir, "node_modules", "node-llama-cpp");
const prebuiltRoot = path.join(rootDir, "node_modules", "@node-llama-cpp");
const localBuildsDir = path.join(nlcDir, "llama", "localBuilds");
const force = process.argv.includes("--force");

/** Variants: prebuilt package folder → node-llama-cpp local build folder name. */
const variants = [
    {gpu: "cpu", pkg: "linux-x64", folder: "linux-x64"},
    {gpu: "vulkan", pkg: "linux-x64-vulkan", folder: "linux-x64-vulkan", needs: "vulkan"},
    {gpu: "cuda", pkg: "linux-x64-cuda", folder: "linux-x64-cuda", extPkg: "linux-x64-cuda-ext"}
];

function log(message) {
    console.log(`[tensorwise native] ${message}`);
}

function fail(message) {
    console.error(`\n[tensorwise native] ERROR: ${message}\n`);
    process.exit(1);
}

function run(command, args, options = {}) {
    const result = spawnSync(command, args, {stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", ...options});
    if (result.error != null)
        fail(`could not run ${command}: ${result.error.message}`);
    if (result.status !== 0)
        fail(`${command} ${args.join(" ")} failed (exit ${result.status}):\n${(result.stdout ?? "") + (result.stderr ?? "")}`);
    return result.stdout;
}

function checkVersion() {
    const packageJsonPath = path.join(nlcDir, "package.json");
    if (!fs.existsSync(packageJsonPath))
        fail("node-llama-cpp is not installed (run `npm install`)");
    const {version} = JSON.parse(fs.readFileSync(packageJsonPath, "utf8"));
    if (version !== EXPECTED_NODE_LLAMA_CPP_VERSION)
        fail(`node-llama-cpp is ${version}, but the tensorwise patch is for exactly ${EXPECTED_NODE_LLAMA_CPP_VERSION}. ` +
            "Pin it in package.json or port native/patches/.");
}

function patchArgs(patchFile, targetDir, strip) {
    return ["-p" + strip, "-d", targetDir, "-i", patchFile, "--forward", "--no-backup-if-mismatch", "-r", "-"];
}

/** Whether `patchFile` is applied on top of `targetDir` (its reverse applies cleanly). */
function isApplied(patchFile, targetDir, strip) {
    return spawnSync("patch", [...patchArgs(patchFile, targetDir, strip), "--reverse", "--dry-run"], {encoding: "utf8"}).status === 0;
}

/**
 * Applies unified diffs in order, each on top of the previous ones (a later patch may change lines an earlier one
 * added), skipping those already applied: the last one found applied marks everything before it as applied too.
 */
function applyPatchSeries(patchFiles, targetDir, strip) {
    let applied = patchFiles.length;
    while (applied > 0 && !isApplied(patchFiles[applied - 1], targetDir, strip))
        applied--;
    return patchFiles.map((patchFile, i) => `${path.basename(patchFile)} ${i < applied ? "already applied" : applyPatch(patchFile, targetDir, strip, false)}`).join(", ");
}

/** Applies a unified diff with `patch`, skipping it when it is already applied (idempotent). */
function applyPatch(patchFile, targetDir, strip, checkApplied = true) {
    const common = patchArgs(patchFile, targetDir, strip);
    if (checkApplied && isApplied(patchFile, targetDir, strip))
        return "already applied";
    const check = spawnSync("patch", [...common, "--dry-run"], {encoding: "utf8"});
    if (check.status !== 0)
        fail(`${path.basename(patchFile)} does not apply to ${targetDir}:\n${check.stdout}${check.stderr}`);
    run("patch", [...common, "--silent"]);
    return "applied";
}

/** Hash of the files' contents and of their paths relative to the project root, so a moved or copied checkout is up to date. */
function hashFiles(files, extra) {
    const hash = createHash("sha256");
    for (const file of files)
        hash.update(path.relative(rootDir, file).split(path.sep).join("/")).update(fs.readFileSync(file));
    hash.update(extra);
    return hash.digest("hex").slice(0, 16);
}

function ensureLlamaCppSource() {
    const bundle = path.join(nlcDir, "llama", "gitRelease.bundle");
    const target = path.join(buildDir, "llama.cpp");
    if (fs.existsSync(path.join(target, "include", "llama.h")))
        return target;
    if (!fs.existsSync(bundle))
        fail(`the llama.cpp source bundle is missing: ${bundle}`);
    fs.rmSync(target, {recursive: true, force: true});
    fs.mkdirSync(buildDir, {recursive: true});
    log("extracting llama.cpp headers from node-llama-cpp's git bundle");
    run("git", ["clone", "--quiet", bundle, target]);
    return target;
}

function findLib(dir, predicate) {
    const name = fs.readdirSync(dir).find(predicate);
    if (name == null)
        fail(`no matching library in ${dir}`);
    return name;
}

function hasVulkanHeaders() {
    return fs.existsSync("/usr/include/vulkan/vulkan.h");
}

function copyDir(from, to) {
    fs.mkdirSync(to, {recursive: true});
    for (const entry of fs.readdirSync(from, {withFileTypes: true})) {
        const source = path.join(from, entry.name);
        const target = path.join(to, entry.name);
        if (entry.isDirectory())
            copyDir(source, target);
        else
            fs.copyFileSync(source, target);
    }
}

function verifyAddon(addonPath, variant) {
    const script = `
        const addon = require(${JSON.stringify(addonPath)});
        if (typeof addon.tensorwiseExtVersion !== "function") { console.error("no tensorwise extension"); process.exit(2); }
        const version = addon.tensorwiseExtVersion();
        if (version !== ${EXT_VERSION}) { console.error("extension version " + version); process.exit(3); }
        console.log("ok");`;
    const result = spawnSync(process.execPath, ["-e", script], {encoding: "utf8"});
    if (result.status !== 0) {
        const output = (result.stdout ?? "") + (result.stderr ?? "");
        if (variant.gpu !== "cpu" && /cannot open shared object file/.test(output)) {
            // e.g. the CUDA variant on a machine without the CUDA runtime: node-llama-cpp falls back to another variant
            log(`${variant.gpu}: built, but it cannot load on this machine (${output.trim().split("\n").at(-1)}); ` +
                "it will be used where its runtime exists");
            return;
        }
        fail(`the ${variant.gpu} addon at ${addonPath} does not load with the tensorwise extension:\n${output}`);
    }
}

function buildVariant(variant, llamaSrc, addonSrc) {
    const prebuiltDir = path.join(prebuiltRoot, variant.pkg, "bins", variant.pkg);
    if (!fs.existsSync(path.join(prebuiltDir, "llama-addon.node"))) {
        log(`${variant.gpu}: no prebuilt binaries for this platform, skipped`);
        return;
    }
    if (variant.needs === "vulkan" && !hasVulkanHeaders()) {
        const message = `${variant.gpu}: the Vulkan headers are missing (apt-get install libvulkan-dev)`;
        if (process.env.TENSORWISE_REQUIRE_VULKAN === "1")
            fail(message);
        log(`${message}; skipped`);
        return;
    }

    const libLlama = findLib(prebuiltDir, (name) => /^libllama\..*so$/.test(name) && name !== "libllama-common.so");
    const libGgml = findLib(prebuiltDir, (name) => /^libggml\..*so$/.test(name));
    const inputs = [
        path.join(nativeDir, "CMakeLists.txt"),
        path.join(nativeDir, "install.mjs"),
        ...fs.readdirSync(path.join(nativeDir, "patches")).map((name) => path.join(nativeDir, "patches", name)),
        ...fs.readdirSync(path.join(nativeDir, "src")).map((name) => path.join(nativeDir, "src", name)),
        path.join(prebuiltDir, "_nlcBuildMetadata.json"),
        path.join(prebuiltDir, libLlama)
    ];
    const buildHash = hashFiles(inputs, EXPECTED_NODE_LLAMA_CPP_VERSION + variant.folder);

    const outFolder = path.join(localBuildsDir, variant.folder);
    const releaseDir = path.join(outFolder, "Release");
    const stampPath = path.join(releaseDir, "tensorwise-build.json");
    if (!force && fs.existsSync(stampPath) && fs.existsSync(path.join(outFolder, "buildDone.status"))) {
        const stamp = JSON.parse(fs.readFileSync(stampPath, "utf8"));
        if (stamp.buildHash === buildHash) {
            log(`${variant.gpu}: up to date`);
            verifyAddon(path.join(releaseDir, "llama-addon.node"), variant);
            return;
        }
    }

    const started = Date.now();
    const cmakeBuildDir = path.join(buildDir, "cmake-" + variant.gpu);
    fs.rmSync(cmakeBuildDir, {recursive: true, force: true});
    log(`${variant.gpu}: building the patched addon against ${path.relative(rootDir, prebuiltDir)}`);
    run("cmake", [
        "-S", nativeDir, "-B", cmakeBuildDir, "-DCMAKE_BUILD_TYPE=Release",
        "-DADDON_SRC_DIR=" + addonSrc,
        "-DEXT_SRC_DIR=" + path.join(nativeDir, "src"),
        "-DLLAMA_SRC_DIR=" + llamaSrc,
        "-DPREBUILT_DIR=" + prebuiltDir,
        "-DNODE_API_INCLUDE_DIR=" + path.join(rootDir, "node_modules", "node-api-headers", "include"),
        "-DNODE_ADDON_API_DIR=" + path.join(rootDir, "node_modules", "node-addon-api"),
        "-DLIB_LLAMA=" + libLlama,
        "-DLIB_GGML=" + libGgml,
        "-DGPU_INFO_USE_VULKAN=" + (variant.gpu === "vulkan" ? "ON" : "OFF")
    ]);
    run("cmake", ["--build", cmakeBuildDir, "--parallel", String(Math.max(2, Math.min(8, (cpuCount()))))]);

    // Install as node-llama-cpp's local build: addon + the prebuilt libraries beside it (RUNPATH $ORIGIN).
    fs.rmSync(outFolder, {recursive: true, force: true});
    copyDir(prebuiltDir, releaseDir);
    if (variant.extPkg != null) {
        const extDir = path.join(prebuiltRoot, variant.extPkg, "bins", variant.pkg);
        if (fs.existsSync(extDir))
            copyDir(extDir, releaseDir);
    }
    fs.copyFileSync(path.join(cmakeBuildDir, "llama-addon.node"), path.join(releaseDir, "llama-addon.node"));
    fs.writeFileSync(stampPath, JSON.stringify({buildHash, extVersion: EXT_VERSION, builtAt: new Date().toISOString()}, null, 2));
    verifyAddon(path.join(releaseDir, "llama-addon.node"), variant);
    fs.writeFileSync(path.join(outFolder, "buildDone.status"), "", "utf8");
    log(`${variant.gpu}: installed as a node-llama-cpp local build in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function cpuCount() {
    try {
        return Number(execFileSync("nproc", {encoding: "utf8"}).trim()) || 2;
    } catch {
        return 2;
    }
}

function main() {
    if (process.platform !== "linux" || process.arch !== "x64") {
        // The patch itself is portable; only this installer's variant table is Linux x64 for now.
        fail(`only linux-x64 is supported by native/install.mjs so far (this is ${process.platform}-${process.arch})`);
    }
    checkVersion();
    // the first adds tensor overrides and the no-alloc simulation's; the second llama.cpp's --device, op offload and KV
    // offload; the third the MTP layers and an MTP context (speculative decoding); the fourth fails only the sequence whose
    // sampling failed (a grammar with no way forward), not the process
    log("node-llama-cpp JS: " + applyPatchSeries(["node-llama-cpp-js.patch", "node-llama-cpp-js-knobs.patch", "node-llama-cpp-js-spec.patch",
        "node-llama-cpp-js-sampling-errors.patch"]
        .map((name) => path.join(nativeDir, "patches", name)), nlcDir, 1));

    const llamaSrc = ensureLlamaCppSource();
    const addonSrc = path.join(buildDir, "addon-src");
    fs.rmSync(addonSrc, {recursive: true, force: true});
    copyDir(path.join(nlcDir, "llama", "addon"), addonSrc);
    applyPatch(path.join(nativeDir, "patches", "addon.patch"), addonSrc, 2);

    const only = process.env.TENSORWISE_NATIVE_VARIANTS?.split(",").map((name) => name.trim());
    for (const variant of variants) {
        if (only != null && !only.includes(variant.gpu))
            continue;
        buildVariant(variant, llamaSrc, addonSrc);
    }
}

main();
await import("./buildRpc.mjs").then(({buildRpc}) => buildRpc()); // llama.cpp RPC backend + rpc-server beside each local build
