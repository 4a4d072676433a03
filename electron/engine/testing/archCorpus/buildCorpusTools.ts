/**
 * The stock llama.cpp programs the architecture corpus needs, compiled from the llama.cpp source node-llama-cpp's
 * binaries were built from against those very prebuilt libraries (as llama-bench is, buildLlamaBench.ts), and cached
 * per program, variant, llama.cpp commit, library build and source under `build/native/arch-corpus/`:
 *
 * - `test-llama-archs` (tests/test-llama-archs.cpp `-o DIR`): writes a small random-weight model of every architecture.
 *   node-llama-cpp's `llama/patches/PR-22566.diff` changes how `llama_model_loader` counts the tensors of a model built
 *   from metadata alone, and against the patched libllama the generator fails ("too many tensors created") or would
 *   drop optional tensors. The patch touches nothing but src/llama-model-loader.cpp, whose classes libllama exports
 *   without -Bsymbolic; so the generator is linked with that one file compiled from the unpatched source, and the
 *   dynamic linker binds every loader call in libllama to this copy (ELF symbol interposition). About 15 s instead of
 *   rebuilding libllama (≈ 8 min on 2 cores). {@link ensureStockArchGenerator} builds the fully stock generator that
 *   way for a byte-for-byte check (the corpus script's `--check-generator`). If another patch ever touches more files,
 *   {@link ensureCorpusTool} refuses the generator and says so.
 * - `llama-quantize` (tools/quantize): Q8_0, Q4_K_M, MXFP4_MOE variants of the generated models.
 * - `greedy-tokens` (native/tools/greedyTokens.cpp): stock llama.cpp's greedy tokens for a prompt of token ids on the
 *   placement given as llama.cpp flags, with the bytes llama.cpp put in each buffer type.
 *
 * Every program sits in a folder of links to the variant's libraries, because `ggml_backend_load_all()` looks for the
 * dlopen'ed backends in the executable's own folder.
 */
import {spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {
    defaultLlamaBenchPaths, findLibrary, librariesHash, linkLibraries, llamaCppCommit, type LlamaBenchVariant
} from "../../bench/llamaBench/buildLlamaBench.js";

/** The programs {@link ensureCorpusTool} builds. */
export type CorpusToolName = "test-llama-archs" | "llama-quantize" | "greedy-tokens";

/** Why a corpus tool cannot be built here (no compiler, source or libraries); the message says what to do. */
export class CorpusToolUnavailable extends Error {}

/** A ready program. */
export type CorpusTool = {
    readonly name: CorpusToolName | "test-llama-archs (stock libllama)";
    readonly program: string;
    readonly variant: LlamaBenchVariant;
    /** llama.cpp commit of the source it was compiled from. */
    readonly commit: string;
    /** `true` when this call compiled it, `false` when the cache had it. */
    readonly built: boolean;
};

/** Where the libraries, the llama.cpp source, our own tool sources, node-llama-cpp's patches and the cache live. */
export type CorpusToolPaths = {
    readonly libDir: string;
    readonly sourceDir: string;
    /** native/tools of this checkout. */
    readonly toolsDir: string;
    /** node-llama-cpp's llama/patches (the patches its prebuilt libllama carries). */
    readonly patchesDir: string;
    readonly cacheRoot: string;
};

/** The only file the generator may take from the unpatched source instead of the prebuilt libllama. */
const INTERPOSED_SOURCE = "src/llama-model-loader.cpp";

/** The paths of this checkout for a variant (its node-llama-cpp local build, build/native/llama.cpp, native/tools). */
export function defaultCorpusToolPaths(variant: LlamaBenchVariant): CorpusToolPaths {
    const bench = defaultLlamaBenchPaths(variant);
    // the checkout holding node_modules/node-llama-cpp (sourceDir is <root>/build/native/llama.cpp)
    const root = path.resolve(bench.sourceDir, "..", "..", "..");
    return {
        libDir: bench.libDir, sourceDir: bench.sourceDir,
        toolsDir: path.join(root, "native", "tools"),
        // libDir is node_modules/node-llama-cpp/llama/localBuilds/<variant>/Release
        patchesDir: path.join(bench.libDir, "..", "..", "..", "patches"),
        cacheRoot: path.join(path.dirname(bench.cacheRoot), "arch-corpus")
    };
}

/** Source files touched by each node-llama-cpp patch (`diff --git a/X b/X` lines), by patch file name. */
export function patchedFiles(patchesDir: string): Map<string, string[]> {
    const touched = new Map<string, string[]>();
    if (!fs.existsSync(patchesDir)) return touched;
    for (const entry of fs.readdirSync(patchesDir).filter((name) => /\.(diff|patch)$/.test(name)).sort()) {
        const text = fs.readFileSync(path.join(patchesDir, entry), "utf8");
        touched.set(entry, [...text.matchAll(/^diff --git a\/(\S+) b\/\S+$/gm)].map((match) => match[1]!));
    }
    return touched;
}

/**
 * Why the generator cannot be built against the prebuilt libllama with only {@link INTERPOSED_SOURCE} unpatched, or
 * `null` when it can: every patch of node-llama-cpp must touch that file alone.
 */
export function interpositionProblem(patches: ReadonlyMap<string, readonly string[]>): string | null {
    for (const [patch, files] of patches) {
        const others = files.filter((file) => file !== INTERPOSED_SOURCE);
        if (others.length > 0)
            return `node-llama-cpp's patch ${patch} changes ${others.join(", ")} besides ${INTERPOSED_SOURCE}, so the prebuilt libllama ` +
                "may not behave as stock llama.cpp when it writes models: generate with the stock build instead (arch-corpus --stock-generator)";
    }
    return null;
}

type ToolSpec = {sources: string[]; includeDirs: string[]; optimize: string};

function toolSpec(name: CorpusToolName, paths: CorpusToolPaths): ToolSpec {
    const src = (relative: string) => path.join(paths.sourceDir, relative);
    const common = ["include", "ggml/include", "common", "vendor"].map(src);
    switch (name) {
        case "test-llama-archs":
            // source: tests/CMakeLists.txt llama_build(test-llama-archs.cpp); the test includes ../src/*.h
            return {sources: [src("tests/test-llama-archs.cpp"), src(INTERPOSED_SOURCE), path.join(paths.toolsDir, "loadAllBackends.cpp")],
                includeDirs: [...common, src("src")], optimize: "-O1"};
        case "llama-quantize":
            // source: tools/quantize/CMakeLists.txt (llama-quantize-impl + main.cpp)
            return {sources: [src("tools/quantize/main.cpp"), src("tools/quantize/quantize.cpp")], includeDirs: [...common, src("tools/quantize")], optimize: "-O2"};
        case "greedy-tokens":
            return {sources: [path.join(paths.toolsDir, "greedyTokens.cpp")], includeDirs: common, optimize: "-O2"};
    }
}

function sourcesHash(files: readonly string[]): string {
    const hash = createHash("sha256");
    for (const file of files) hash.update(path.basename(file)).update(fs.readFileSync(file));
    return hash.digest("hex").slice(0, 8);
}

function linkedLibraries(libDir: string): string[] {
    return [
        findLibrary(libDir, /^libllama\..*so$/, "libllama-common.so"),
        findLibrary(libDir, /^libllama-common\.so$/),
        findLibrary(libDir, /^libggml\..*so$/),
        findLibrary(libDir, /^libggml-base\.so$/)
    ];
}

function checkCompiler(compiler: string, what: string): void {
    const probe = spawnSync(compiler, ["--version"], {encoding: "utf8"});
    if (probe.error != null || probe.status !== 0)
        throw new CorpusToolUnavailable(`no C++ compiler (${compiler}) to build ${what}: install g++ (apt-get install g++) or set CXX.`);
}

/**
 * Returns the cached program for `variant`, compiling it first when needed (`CXX`, default `g++`; seconds each).
 * Throws {@link CorpusToolUnavailable} when a compiler, the source or the libraries are missing, or (for the generator)
 * when node-llama-cpp's patches reach beyond the loader.
 */
export function ensureCorpusTool(name: CorpusToolName, variant: LlamaBenchVariant = "cpu",
    options: {paths?: CorpusToolPaths; onProgress?: (message: string) => void} = {}): CorpusTool {
    const paths = options.paths ?? defaultCorpusToolPaths(variant);
    if (!fs.existsSync(paths.libDir))
        throw new CorpusToolUnavailable(`the ${variant} build of llama.cpp is not installed (${paths.libDir}): run \`TENSORWISE_NATIVE_VARIANTS=${variant} npm install\`.`);
    if (name === "test-llama-archs") {
        const problem = interpositionProblem(patchedFiles(paths.patchesDir));
        if (problem != null) throw new CorpusToolUnavailable(problem);
    }
    const spec = toolSpec(name, paths);
    const missing = spec.sources.find((file) => !fs.existsSync(file));
    if (missing != null)
        throw new CorpusToolUnavailable(`${missing} is missing: run \`npm run native\` to extract the llama.cpp source.`);
    const libraries = linkedLibraries(paths.libDir);
    const commit = llamaCppCommit(paths.sourceDir);
    const outDir = path.join(paths.cacheRoot, `${name}-${variant}-${commit.slice(0, 12)}-${librariesHash(libraries)}-${sourcesHash(spec.sources)}`);
    const program = path.join(outDir, name);
    linkLibraries(paths.libDir, outDir);
    if (fs.existsSync(program)) return {name, program, variant, commit, built: false};

    const compiler = process.env.CXX ?? "g++";
    checkCompiler(compiler, name);
    options.onProgress?.(`building ${name} (${variant}, llama.cpp ${commit.slice(0, 12)}) into ${outDir}`);
    const tmp = `${program}.tmp-${process.pid}`;
    const args = [spec.optimize, "-DNDEBUG", "-std=c++17", "-pthread", ...spec.includeDirs.map((dir) => `-I${dir}`),
        ...spec.sources, ...libraries, "-Wl,-rpath,$ORIGIN", "-o", tmp];
    const compiled = spawnSync(compiler, args, {encoding: "utf8", maxBuffer: 16 << 20});
    if (compiled.status !== 0) {
        fs.rmSync(tmp, {force: true});
        throw new CorpusToolUnavailable(`building ${name} failed (${compiler} exit ${compiled.status}): ` +
            (compiled.stderr || compiled.stdout).trim().split("\n").slice(-5).join(" "));
    }
    fs.renameSync(tmp, program);
    return {name, program, variant, commit, built: true};
}

/**
 * test-llama-archs linked against libllama and ggml built CPU-only from the unpatched source with cmake (≈ 8 min on 2
 * cores the first time), cached per commit under `build/native/arch-corpus/stock-<commit>/`: the reference the
 * interposed generator of {@link ensureCorpusTool} is checked against byte for byte.
 */
export function ensureStockArchGenerator(options: {paths?: CorpusToolPaths; onProgress?: (message: string) => void} = {}): CorpusTool {
    const paths = options.paths ?? defaultCorpusToolPaths("cpu");
    const commit = llamaCppCommit(paths.sourceDir);
    const buildDir = path.join(paths.cacheRoot, `stock-${commit.slice(0, 12)}`);
    const program = path.join(buildDir, "bin", "test-llama-archs");
    if (fs.existsSync(program)) return {name: "test-llama-archs (stock libllama)", program, variant: "cpu", commit, built: false};
    for (const tool of ["cmake", process.env.CXX ?? "g++"]) checkCompiler(tool, "the stock generator");
    options.onProgress?.(`building libllama and test-llama-archs CPU-only from the unpatched source (llama.cpp ${commit.slice(0, 12)}) in ${buildDir}; about 8 minutes on 2 cores`);
    const run = (args: string[]) => {
        const result = spawnSync("cmake", args, {encoding: "utf8", maxBuffer: 64 << 20});
        if (result.status !== 0)
            throw new CorpusToolUnavailable(`cmake ${args[0]} failed (exit ${result.status}): ${(result.stderr || result.stdout).trim().split("\n").slice(-5).join(" ")}`);
    };
    run(["-S", paths.sourceDir, "-B", buildDir, "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=ON", "-DGGML_NATIVE=ON",
        "-DLLAMA_BUILD_TESTS=ON", "-DLLAMA_BUILD_TOOLS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF",
        "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_OPENSSL=OFF"]);
    run(["--build", buildDir, "--target", "test-llama-archs", "--parallel", "2"]);
    if (!fs.existsSync(program)) throw new CorpusToolUnavailable(`the stock build finished without ${program}`);
    return {name: "test-llama-archs (stock libllama)", program, variant: "cpu", commit, built: true};
}
