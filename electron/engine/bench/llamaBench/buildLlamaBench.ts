/**
 * Builds stock `llama-bench` from the llama.cpp source that node-llama-cpp's binaries were built from, linked against
 * the very libraries tensorwise loads (node-llama-cpp's local build of the variant), and caches it per llama.cpp commit
 * and variant under `build/native/llama-bench/<variant>-<commit>/`.
 *
 * The binary sits in a folder of links to every library of the variant, because `ggml_backend_load_all()` looks for the
 * dlopen'ed backends (`libggml-cpu-*.so`, `libggml-vulkan.so`, …) in the executable's own folder.
 * source: tools/llama-bench/{llama-bench,main}.cpp; ggml/src/ggml-backend-reg.cpp ggml_backend_load_best.
 */
import {spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";

/** The llama.cpp builds tensorwise installs (native/install.mjs), by the local-build folder node-llama-cpp uses. */
export type LlamaBenchVariant = "cpu" | "vulkan" | "cuda";

const VARIANT_FOLDERS: Readonly<Record<LlamaBenchVariant, string>> = {
    cpu: "linux-x64", vulkan: "linux-x64-vulkan", cuda: "linux-x64-cuda"
};

/** Where a variant's libraries, the llama.cpp source and the cache live. */
export type LlamaBenchPaths = {
    /** Folder holding libllama*, libggml* and the backends of the variant (node-llama-cpp's local build). */
    readonly libDir: string;
    /** llama.cpp source (extracted by native/install.mjs). */
    readonly sourceDir: string;
    /** Parent of the per-commit cache folders. */
    readonly cacheRoot: string;
};

/** A ready `llama-bench`. */
export type LlamaBenchBinary = {
    readonly program: string;
    readonly variant: LlamaBenchVariant;
    /** llama.cpp commit (or release tag when the source carries no git metadata). */
    readonly commit: string;
    /** `true` when this call compiled it (≈ 1 min on 2 cores), `false` when the cache had it. */
    readonly built: boolean;
};

/** Why llama-bench cannot be built here (no compiler, no source, no libraries); the message says what to do. */
export class LlamaBenchUnavailable extends Error {}

/** The local-build and source folders of an installed checkout (the nearest node_modules/node-llama-cpp). */
export function defaultLlamaBenchPaths(variant: LlamaBenchVariant): LlamaBenchPaths {
    const require = createRequire(import.meta.url);
    let nlcDir = path.dirname(require.resolve("node-llama-cpp"));
    while (!fs.existsSync(path.join(nlcDir, "package.json")) && path.dirname(nlcDir) !== nlcDir) nlcDir = path.dirname(nlcDir);
    const root = path.dirname(path.dirname(nlcDir));
    return {
        libDir: path.join(nlcDir, "llama", "localBuilds", VARIANT_FOLDERS[variant], "Release"),
        sourceDir: path.join(root, "build", "native", "llama.cpp"),
        cacheRoot: path.join(root, "build", "native", "llama-bench")
    };
}

/** The variant of a loaded llama (`llama.gpu`: `false`, `"vulkan"`, `"cuda"`, …). */
export function llamaBenchVariantOf(gpu: string | false): LlamaBenchVariant {
    if (gpu === false) return "cpu";
    if (gpu === "vulkan" || gpu === "cuda") return gpu;
    throw new LlamaBenchUnavailable(`llama-bench can only be built for the cpu, vulkan and cuda builds here, not ${gpu}.`);
}

/**
 * The commit of the source: a COMMIT file (trimmed source bundles, bench/gpu/make-bundle.sh), else its own git HEAD
 * (never that of a repository above it), else node-llama-cpp's release tag.
 */
export function llamaCppCommit(sourceDir: string): string {
    const commitFile = path.join(sourceDir, "COMMIT");
    if (fs.existsSync(commitFile)) return fs.readFileSync(commitFile, "utf8").trim();
    if (fs.existsSync(path.join(sourceDir, ".git"))) {
        const git = spawnSync("git", ["-C", sourceDir, "rev-parse", "HEAD"], {encoding: "utf8"});
        if (git.status === 0 && /^[0-9a-f]{40}$/.test(git.stdout.trim())) return git.stdout.trim();
    }
    const info = path.join(sourceDir, "..", "..", "..", "node_modules", "node-llama-cpp", "llama", "llama.cpp.info.json");
    if (fs.existsSync(info)) return String((JSON.parse(fs.readFileSync(info, "utf8")) as {tag?: unknown}).tag ?? "unknown");
    return "unknown";
}

/** The first library in `libDir` whose name matches `pattern` (other than `exclude`); throws {@link LlamaBenchUnavailable}. */
export function findLibrary(libDir: string, pattern: RegExp, exclude?: string): string {
    const name = fs.readdirSync(libDir).find((entry) => pattern.test(entry) && entry !== exclude);
    if (name == null) throw new LlamaBenchUnavailable(`${libDir} has no library matching ${pattern}: run \`npm install\` again.`);
    return path.join(libDir, name);
}

/** Short hash of the libraries llama-bench links, so a rebuilt variant gets a fresh binary. */
export function librariesHash(libraries: readonly string[]): string {
    const hash = createHash("sha256");
    for (const file of libraries) {
        const stat = fs.statSync(file);
        hash.update(`${path.basename(file)}:${stat.size}:${stat.mtimeMs}`);
    }
    return hash.digest("hex").slice(0, 8);
}

/** A stock llama.cpp program built against the installed libraries: its name, sources and include folders (in the source). */
export type StockLlamaTool = {readonly name: string; readonly sources: readonly string[]; readonly includes: readonly string[]};

/** source: the llama-bench target of tools/llama-bench/CMakeLists.txt. */
export const LLAMA_BENCH_TOOL: StockLlamaTool = {
    name: "llama-bench", sources: ["tools/llama-bench/llama-bench.cpp", "tools/llama-bench/main.cpp"],
    includes: ["include", "ggml/include", "common", "vendor", "tools/llama-bench"]
};

/**
 * source: the llama-speculative-simple target of examples/speculative-simple/CMakeLists.txt — the reference for
 * speculative decoding (`--spec-type`, `-md`, `--spec-draft-n-max`), which prints what it generates.
 */
export const LLAMA_SPECULATIVE_SIMPLE_TOOL: StockLlamaTool = {
    name: "llama-speculative-simple", sources: ["examples/speculative-simple/speculative-simple.cpp"],
    includes: ["include", "ggml/include", "common", "vendor"]
};

/**
 * Returns a cached `llama-bench` for the variant, compiling it first when needed (`CXX`, default `g++`).
 * Throws {@link LlamaBenchUnavailable} when a compiler, the source or the variant's libraries are missing.
 */
export function ensureLlamaBench(variant: LlamaBenchVariant, options: {paths?: LlamaBenchPaths; onProgress?: (message: string) => void} = {}): LlamaBenchBinary {
    return ensureStockLlamaTool(LLAMA_BENCH_TOOL, variant, options);
}

/** {@link ensureLlamaBench} for any {@link StockLlamaTool}, cached beside llama-bench. */
export function ensureStockLlamaTool(tool: StockLlamaTool, variant: LlamaBenchVariant,
    options: {paths?: LlamaBenchPaths; onProgress?: (message: string) => void} = {}): LlamaBenchBinary {
    const paths = options.paths ?? defaultLlamaBenchPaths(variant);
    const {libDir, sourceDir} = paths;
    if (!fs.existsSync(libDir))
        throw new LlamaBenchUnavailable(`the ${variant} build of llama.cpp is not installed (${libDir}): run \`TENSORWISE_NATIVE_VARIANTS=${variant} npm install\`.`);
    const mainSource = path.join(sourceDir, tool.sources[0]!);
    if (!fs.existsSync(mainSource))
        throw new LlamaBenchUnavailable(`the llama.cpp source is missing (${mainSource}): run \`npm run native\` to extract it.`);
    const compiler = process.env.CXX ?? "g++";
    const libraries = [
        findLibrary(libDir, /^libllama\..*so$/, "libllama-common.so"),
        findLibrary(libDir, /^libllama-common\.so$/),
        findLibrary(libDir, /^libggml\..*so$/),
        findLibrary(libDir, /^libggml-base\.so$/)
    ];
    const commit = llamaCppCommit(sourceDir);
    const outDir = path.join(paths.cacheRoot, `${variant}-${commit.slice(0, 12)}-${librariesHash(libraries)}`);
    const program = path.join(outDir, tool.name);
    linkLibraries(libDir, outDir);
    if (fs.existsSync(program)) return {program, variant, commit, built: false};

    const probe = spawnSync(compiler, ["--version"], {encoding: "utf8"});
    if (probe.error != null || probe.status !== 0)
        throw new LlamaBenchUnavailable(`no C++ compiler (${compiler}) to build ${tool.name}: install g++ (apt-get install g++) or set CXX.`);
    options.onProgress?.(`building ${tool.name} (${variant}, llama.cpp ${commit.slice(0, 12)}) into ${outDir}`);
    const tmp = `${program}.tmp-${process.pid}`;
    // against the prebuilt shared libraries
    const args = ["-O2", "-DNDEBUG", "-std=c++17", "-pthread",
        ...tool.includes.map((dir) => `-I${path.join(sourceDir, dir)}`),
        ...tool.sources.map((source) => path.join(sourceDir, source)),
        ...libraries, `-Wl,-rpath,$ORIGIN`, "-o", tmp];
    const compiled = spawnSync(compiler, args, {encoding: "utf8", maxBuffer: 16 << 20});
    if (compiled.status !== 0) {
        fs.rmSync(tmp, {force: true});
        throw new LlamaBenchUnavailable(`building ${tool.name} failed (${compiler} exit ${compiled.status}): ${(compiled.stderr || compiled.stdout).trim().split("\n").slice(-5).join(" ")}`);
    }
    fs.renameSync(tmp, program);
    return {program, variant, commit, built: true};
}

/** Links every shared library of the variant into `outDir` (idempotent), so the backends load from there. */
export function linkLibraries(libDir: string, outDir: string): void {
    fs.mkdirSync(outDir, {recursive: true});
    for (const entry of fs.readdirSync(libDir)) {
        if (!/\.so(\.\d+)*$/.test(entry)) continue;
        const link = path.join(outDir, entry);
        if (!fs.existsSync(link)) fs.symlinkSync(path.join(libDir, entry), link);
    }
}
