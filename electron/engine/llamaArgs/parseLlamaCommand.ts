/**
 * Reads a llama.cpp command line (llama-server, llama-cli, llama-bench) the way llama.cpp reads it, into what decides
 * where the model's weights, KV cache and compute go and how fast it runs: `-ngl`, every `-ot` / `--cpu-moe` /
 * `--n-cpu-moe` / `--n-cpu-ffn` override in the order llama.cpp appends them, `--fit`, the devices and split, the batch
 * sizes, flash attention, the KV cache types and offload, op offload, threads, context, slots and load mode.
 *
 * The flags are llama.cpp's own (llamaArgTable.ts, generated from common/arg.cpp and llama-bench.cpp), so aliases,
 * `LLAMA_ARG_*` environment variables (applied before the command line, as common_params_parse_ex does) and removed
 * flags are known. Every other flag the program takes is listed as not priced, with why; an unknown flag, a removed
 * one, or a value llama.cpp would reject is refused by name — nothing is dropped without a word.
 */
import {LLAMA_ARGS, LLAMA_BENCH_ARGS, type LlamaArgSpec} from "./llamaArgTable.js";
import {shellWords, ShellWordsError} from "./shellWords.js";

/** The programs whose command lines are read. */
export const LLAMA_PROGRAMS = ["llama-server", "llama-cli", "llama-bench"] as const;
export type LlamaProgram = (typeof LLAMA_PROGRAMS)[number];

/** The `LLAMA_EXAMPLE_*` a program parses its flags as (tools/server/server.cpp, tools/cli/cli.cpp). */
const PROGRAM_EXAMPLE: Record<Exclude<LlamaProgram, "llama-bench">, string> = {"llama-server": "server", "llama-cli": "cli"};

/** A tensor buffer-type override, as llama.cpp appends it to `tensor_buft_overrides`. */
export type CommandOverride = {
    readonly pattern: string;
    readonly bufferType: string;
    /** The flag it came from (`-ot`, `--cpu-moe`, `--n-cpu-moe 4`, `LLAMA_ARG_OVERRIDE_TENSOR`). */
    readonly from: string;
};

/** A flag that was read but does not change what is priced, or one that was refused; `flag` as the user spelled it. */
export type CommandNote = {readonly flag: string; readonly why: string};

/** What a llama.cpp command line asks for, with llama.cpp's defaults where it says nothing (`null`). */
export type LlamaCommand = {
    readonly program: LlamaProgram;
    /** `-m`; `null` when the command names none (the model is the one chosen in tensorwise either way). */
    readonly modelPath: string | null;
    /** `-ngl`: a number of layers, `"auto"` (llama.cpp's default: `--fit` decides) or `"all"`. */
    readonly gpuLayers: number | "auto" | "all";
    readonly overrides: readonly CommandOverride[];
    /** `--fit` (llama.cpp's default on): adjust what the command left unset to the device's memory. */
    readonly fit: boolean;
    /** `-fitt`: MiB to leave free per device (llama.cpp's default 1024). */
    readonly fitTargetMiB: number | null;
    /** `-dev`: device names, `[]` for `none`; `null`: every device. */
    readonly devices: readonly string[] | null;
    readonly splitMode: "none" | "layer" | "row" | "tensor" | null;
    readonly tensorSplit: readonly number[] | null;
    readonly mainGpu: number | null;
    /** `-ub` (llama.cpp's default 512) and `-b` (2048). */
    readonly ubatch: number | null;
    readonly batch: number | null;
    readonly flashAttention: "on" | "off" | "auto" | null;
    readonly cacheTypeK: string | null;
    readonly cacheTypeV: string | null;
    readonly kvOffload: boolean | null;
    readonly opOffload: boolean | null;
    readonly threads: number | null;
    /** `-c`; `null` or 0: the model's trained context. */
    readonly contextSize: number | null;
    readonly parallel: number | null;
    /** `-lm`: auto, none, mmap, mlock, mmap+mlock, dio. */
    readonly loadMode: string | null;
    readonly repack: boolean | null;
    /** Flags read and listed: they change nothing that is priced (sampling, the port, the prompt, …). */
    readonly notPriced: readonly CommandNote[];
    /** Flags refused: unknown, removed, a value llama.cpp would reject, or one tensorwise cannot price. Empty: priceable. */
    readonly refused: readonly CommandNote[];
};

/** A command that cannot be priced as it stands; `refused` names every flag and why. */
export class LlamaCommandError extends Error {
    constructor(readonly refused: readonly CommandNote[]) {
        super(`the llama.cpp command cannot be priced: ${refused.map((note) => `${note.flag}: ${note.why}`).join("; ")}`);
        this.name = "LlamaCommandError";
    }
}

/** source: LLM_FFN_EXPS_REGEX, LLM_FFN_DENSE_REGEX and llm_ffn_block_regex in common/common.h. */
export const LLM_FFN_EXPS_REGEX = "\\.ffn_(up|down|gate|gate_up)_(ch|)exps";
export const LLM_FFN_DENSE_REGEX = "\\.ffn_(up|down|gate)\\.";
const blockRegex = (layer: number, ffn: string) => `blk\\.${layer}${ffn}`;

/**
 * Flags of older llama.cpp builds that forum commands still carry, with this build's spelling. llama.cpp refuses them
 * ("invalid argument"); saying what replaced them is kinder. source: `-lm/--load-mode` in common/arg.cpp.
 */
const RENAMED: Readonly<Record<string, string>> = {
    "--no-mmap": "this llama.cpp spells it `--load-mode none` (-lm none)",
    "--mmap": "this llama.cpp spells it `--load-mode mmap` (-lm mmap)",
    "--mlock": "this llama.cpp spells it `--load-mode mlock` (-lm mlock, or mmap+mlock)",
    "-mmp": "llama-bench of this llama.cpp spells it `-lm none` / `-lm mmap`"
};

/** Flags that change what is priced, by canonical name (a spec's first name); the rest of a program's flags are listed. */
const MODEL_FLAGS = new Set(["-m", "-hf", "-hff", "-mu", "-dr"]);

type Reading = {
    program: LlamaProgram;
    modelPath: string | null;
    gpuLayers: number | "auto" | "all";
    overrides: CommandOverride[];
    fit: boolean;
    fitTargetMiB: number | null;
    devices: string[] | null;
    splitMode: LlamaCommand["splitMode"];
    tensorSplit: number[] | null;
    mainGpu: number | null;
    ubatch: number | null;
    batch: number | null;
    flashAttention: LlamaCommand["flashAttention"];
    cacheTypeK: string | null;
    cacheTypeV: string | null;
    kvOffload: boolean | null;
    opOffload: boolean | null;
    threads: number | null;
    contextSize: number | null;
    parallel: number | null;
    loadMode: string | null;
    repack: boolean | null;
    notPriced: CommandNote[];
    refused: CommandNote[];
};

/** The program a command's first word names, or `null` (then it is read as llama-server's flags). */
function programOf(word: string): LlamaProgram | null {
    const base = word.replace(/\\/g, "/").split("/").at(-1)!.replace(/\.exe$/i, "");
    return (LLAMA_PROGRAMS as readonly string[]).includes(base) ? base as LlamaProgram : null;
}

/** llama.cpp's `std::stoi`, but whole: a value with anything after its digits is refused rather than cut short. */
function integer(value: string): number | null {
    if (!/^\s*[+-]?\d+$/.test(value)) return null;
    const n = Number(value.trim());
    return Number.isSafeInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 ? n : null;
}

const TRUTHY = ["on", "enabled", "true", "1"];
const FALSEY = ["off", "disabled", "false", "0"];

/** The flags a common-arg program takes, by spelling (`--` spellings with `_` read as `-`, as common_params_parse_ex). */
function commonFlags(program: Exclude<LlamaProgram, "llama-bench">): Map<string, {spec: LlamaArgSpec; positive: boolean}> {
    const example = PROGRAM_EXAMPLE[program];
    const flags = new Map<string, {spec: LlamaArgSpec; positive: boolean}>();
    // source: add_opt in common_params_parser_init: the program's own entries, or the common ones, not excluded
    for (const spec of LLAMA_ARGS) {
        if (!(spec.examples.includes(example) || spec.examples.includes("common")) || spec.excludes.includes(example)) continue;
        for (const name of spec.names) if (!flags.has(name)) flags.set(name, {spec, positive: true});
        for (const name of spec.negated) if (!flags.has(name)) flags.set(name, {spec, positive: false});
    }
    return flags;
}

function emptyReading(program: LlamaProgram): Reading {
    return {
        program, modelPath: null, gpuLayers: "auto", overrides: [], fit: true, fitTargetMiB: null, devices: null, splitMode: null,
        tensorSplit: null, mainGpu: null, ubatch: null, batch: null, flashAttention: null, cacheTypeK: null, cacheTypeV: null,
        kvOffload: null, opOffload: null, threads: null, contextSize: null, parallel: null, loadMode: null, repack: null,
        notPriced: [], refused: []
    };
}

/**
 * Applies one flag of a common-arg program to `r`. `name` is the spec's canonical (first) name, `spelled` what the user
 * wrote; `value` is the flag's value (`null` for flags without one), `positive` whether a bool flag was set or negated.
 */
function applyCommon(r: Reading, spec: LlamaArgSpec, spelled: string, value: string | null, positive: boolean): void {
    const refuse = (why: string): void => void r.refused.push({flag: spelled, why});
    if (spec.removed != null) return refuse(`removed from llama.cpp: ${spec.removed}`);
    if (value != null && spec.values != null && !spec.values.includes(value))
        return refuse(`"${value}" is not one of ${spec.values.join(", ")}`);
    const int = (min: number, what = "an integer"): number | null => {
        const n = value == null ? null : integer(value);
        if (n == null || n < min) {
            refuse(`"${value}" is not ${what}${min > -(2 ** 31) ? ` ≥ ${min}` : ""}`);
            return null;
        }
        return n;
    };
    const name = spec.names[0]!;
    switch (name) {
        case "-ngl": {
            if (value === "auto" || value === "-1") r.gpuLayers = "auto";
            else if (value === "all" || value === "-2") r.gpuLayers = "all";
            else {
                const n = int(0, "a number of layers, auto or all");
                if (n != null) r.gpuLayers = n;
            }
            return;
        }
        case "-ot": {
            // source: parse_tensor_buffer_overrides in common/arg.cpp: split on every ",", each at its first "="
            for (const item of value!.split(",")) {
                const at = item.indexOf("=");
                if (at < 0) return refuse(`"${item}" has no "=<buffer type>" (llama.cpp: invalid value)`);
                const pattern = item.slice(0, at);
                try {
                    new RegExp(pattern);
                } catch (error) {
                    return refuse(`"${pattern}" is not a regular expression: ${(error as Error).message}`);
                }
                r.overrides.push({pattern, bufferType: item.slice(at + 1), from: `${spelled} ${value}`});
            }
            return;
        }
        case "-cmoe":
            r.overrides.push({pattern: LLM_FFN_EXPS_REGEX, bufferType: "CPU", from: spelled});
            return;
        case "-ncmoe":
        case "-ncffn": {
            const n = int(0);
            if (n == null) return;
            for (let i = 0; i < n; i++)
                r.overrides.push({pattern: blockRegex(i, name === "-ncmoe" ? LLM_FFN_EXPS_REGEX : LLM_FFN_DENSE_REGEX), bufferType: "CPU", from: `${spelled} ${n}`});
            return;
        }
        case "-fit":
            r.fit = TRUTHY.includes(value!);
            return;
        case "-fitt": {
            // one MiB value, or one per device (common/arg.cpp: string_split on ",")
            const parts = value!.split(",").map((part) => integer(part));
            if (parts.some((n) => n == null || n < 0)) return refuse(`"${value}" is not MiB per device (integers ≥ 0, comma-separated)`);
            if (new Set(parts).size > 1) return refuse("a different margin per device: tensorwise prices one GPU's budget");
            r.fitTargetMiB = parts[0]!;
            return;
        }
        case "-dev":
            r.devices = value === "none" ? [] : value!.split(",").map((d) => d.trim());
            if (r.devices.some((d) => d === "")) refuse(`"${value}" has an empty device name`);
            return;
        case "-sm":
            r.splitMode = value as Reading["splitMode"];
            return;
        case "-ts": {
            // source: `-ts` in common/arg.cpp: split on "," or "/", each std::stof
            const parts = value!.split(/[,/]/).map((part) => (/^\s*\d+(\.\d+)?\s*$/.test(part) ? Number(part) : NaN));
            if (parts.some((n) => !Number.isFinite(n))) return refuse(`"${value}" is not a list of proportions (N0,N1,…)`);
            r.tensorSplit = parts;
            return;
        }
        case "-mg": {
            const n = int(0);
            if (n != null) r.mainGpu = n;
            return;
        }
        case "-ub":
        case "-b": {
            const n = int(1);
            if (n != null) {
                if (name === "-ub") r.ubatch = n;
                else r.batch = n;
            }
            return;
        }
        case "-fa":
            r.flashAttention = TRUTHY.includes(value!) ? "on" : FALSEY.includes(value!) ? "off" : "auto";
            return;
        case "-ctk":
            r.cacheTypeK = value;
            return;
        case "-ctv":
            r.cacheTypeV = value;
            return;
        case "-kvo":
            r.kvOffload = positive;
            return;
        case "--op-offload":
            r.opOffload = positive;
            return;
        case "--repack":
            r.repack = positive;
            return;
        case "-t": {
            const n = int(1, "a thread count");
            if (n != null) r.threads = n;
            return;
        }
        case "-c": {
            const n = int(0, "a context size");
            if (n != null) r.contextSize = n;
            return;
        }
        case "-np": {
            const n = int(1, "a number of slots");
            if (n != null) r.parallel = n;
            return;
        }
        case "-lm":
            r.loadMode = value;
            return;
        case "--no-host":
            return refuse("tensorwise loads keep llama.cpp's host buffers; a load without them is not priced");
        default:
            break;
    }
    if (MODEL_FLAGS.has(name)) {
        if (name === "-m") r.modelPath = value;
        return void r.notPriced.push({flag: spelled, why: "the model is the one chosen in tensorwise"});
    }
    if (spec.names.some((n) => n.startsWith("--spec-") || n === "-md") || spec.names.includes("--spec-type"))
        return refuse("speculative decoding is chosen on the Offload screen (Speculative); a command's draft settings are not priced yet");
    if (spec.names.includes("--rpc") || spec.names.includes("-tb") || spec.names.includes("--mmproj"))
        return refuse(`${spec.names.join("/")} changes what runs where or how fast, and tensorwise does not price it yet`);
    r.notPriced.push({flag: spelled, why: "changes neither placement nor speed as priced here (sampling, serving, output, …)"});
    return;
}

/** llama-bench's flags, read onto the common flags they mean (tools/llama-bench/llama-bench.cpp, parse_cmd_params). */
function applyBench(r: Reading, names: readonly string[], spelled: string, value: string | null): void {
    const common = (flag: string, v: string | null, positive = true) => {
        const spec = LLAMA_ARGS.find((s) => s.names.includes(flag) || s.negated.includes(flag))!;
        applyCommon(r, spec, spelled, v, positive);
    };
    const name = names[0]!;
    // llama-bench sweeps every comma-separated value (every `-ot` given, for overrides); one configuration is priced
    const sweep = name === "-ot" ? null : value?.split(",");
    if (sweep != null && sweep.length > 1)
        return void r.refused.push({flag: spelled, why: `llama-bench sweeps ${sweep.length} values here; price one configuration: give one value`});
    const bit = (v: string | null) => (v === "1" ? true : v === "0" ? false : null);
    switch (name) {
        case "-ngl": return common("-ngl", value);
        case "-ncmoe": return common("-ncmoe", value);
        case "-ub": return common("-ub", value);
        case "-b": return common("-b", value);
        case "-ctk": return common("-ctk", value);
        case "-ctv": return common("-ctv", value);
        case "-t": return common("-t", value);
        case "-sm": return common("-sm", value);
        case "-mg": return common("-mg", value);
        case "-lm": return common("-lm", value);
        case "-fitt": return common("-fitt", value);
        case "-fa": return common("-fa", value);
        case "-dev": return common("-dev", value!.replace(/\//g, ","));
        case "-ts": return common("-ts", value);
        // llama-bench separates several overrides of one configuration with ";" (print_usage)
        case "-ot": return common("-ot", value!.replace(/;/g, ","));
        case "-nkvo":
        case "-nopo": {
            const on = bit(value);
            if (on == null) return void r.refused.push({flag: spelled, why: `"${value}" is not 0 or 1`});
            return common(name === "-nkvo" ? "-nkvo" : "--no-op-offload", null, !on);
        }
        case "-m":
            r.modelPath = value;
            return void r.notPriced.push({flag: spelled, why: "the model is the one chosen in tensorwise"});
        case "-p": case "-n": case "-pg": case "-d": case "-r": case "-o": case "-oe": case "-v": case "--progress":
        case "--no-warmup": case "--delay": case "--prio": case "--poll": case "-C": case "--cpu-strict": case "-embd": case "--numa":
        case "-lzm": case "-fitc": case "--offline":
            return void r.notPriced.push({flag: spelled, why: "a benchmark setting: tensorwise prices the configuration, not llama-bench's run"});
        default:
            return void r.refused.push({flag: spelled, why: `${names.join("/")} is not priced by tensorwise`});
    }
}

/**
 * Reads `line` as llama.cpp would. Never throws for what the command says: problems are in `refused` (an empty list
 * means it can be priced as read). A line a shell would have to evaluate (`$VAR`, a pipe) is refused as a whole.
 */
export function parseLlamaCommand(line: string): LlamaCommand {
    let words: string[];
    try {
        words = shellWords(line);
    } catch (error) {
        if (!(error instanceof ShellWordsError)) throw error;
        const r = emptyReading("llama-server");
        r.refused.push({flag: "(the command line)", why: `${error.message} (at character ${error.at + 1})`});
        return r;
    }
    // leading NAME=value words are the environment the command runs in
    const env: [string, string][] = [];
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
        const word = words.shift()!;
        env.push([word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]);
    }
    const first = words[0];
    let program: LlamaProgram = "llama-server";
    if (first != null && !first.startsWith("-")) {
        const named = programOf(first);
        words.shift();
        if (named == null) {
            const r = emptyReading("llama-server");
            r.refused.push({flag: first, why: `not a llama.cpp program tensorwise reads (${LLAMA_PROGRAMS.join(", ")})`});
            return r;
        }
        program = named;
    }
    const r = emptyReading(program);
    if (program === "llama-bench") readBench(r, words, env);
    else readCommon(r, program, words, env);
    return r;
}

/**
 * After an unknown flag at `i`, the index of its value where the next word looks like one (not a flag): llama.cpp stops
 * at the unknown flag, so a word after it is most likely its value, not one more problem to report.
 */
function skipValueOfUnknown(words: readonly string[], i: number): number {
    const next = words[i + 1];
    return next != null && (!next.startsWith("-") || /^-\d/.test(next)) ? i + 1 : i;
}

function readCommon(r: Reading, program: Exclude<LlamaProgram, "llama-bench">, words: readonly string[], env: readonly [string, string][]): void {
    const flags = commonFlags(program);
    // source: common_params_parse_ex: environment first (every option with an env name), then the command line
    for (const [name, value] of env) {
        const spec = [...new Set([...flags.values()].map((f) => f.spec))].find((s) => s.env === name);
        if (spec == null) {
            r.notPriced.push({flag: `${name}=…`, why: "not a variable this llama.cpp program reads"});
            continue;
        }
        if (spec.kind === "flag") {
            if (TRUTHY.includes(value)) applyCommon(r, spec, name, null, true);
            continue;
        }
        if (spec.kind === "bool") {
            if (!TRUTHY.includes(value) && !FALSEY.includes(value)) r.refused.push({flag: name, why: `"${value}" is not on or off`});
            else applyCommon(r, spec, name, null, TRUTHY.includes(value));
            continue;
        }
        applyCommon(r, spec, name, value, true);
    }
    for (let i = 0; i < words.length; i++) {
        const spelled = words[i]!;
        const key = spelled.startsWith("--") ? spelled.replace(/_/g, "-") : spelled;
        const found = flags.get(key);
        if (found == null) {
            if (!spelled.startsWith("-")) r.refused.push({flag: spelled, why: "a word where a flag was expected (llama.cpp takes no positional arguments)"});
            else if (RENAMED[key] != null) r.refused.push({flag: spelled, why: `not a flag of this llama.cpp: ${RENAMED[key]}`});
            else if (key.includes("=")) r.refused.push({flag: spelled, why: `llama.cpp does not read "--flag=value"; write "${key.slice(0, key.indexOf("="))} ${key.slice(key.indexOf("=") + 1)}"`});
            else r.refused.push({flag: spelled, why: `not a flag of ${program} in this llama.cpp`});
            i = skipValueOfUnknown(words, i);
            continue;
        }
        const {spec, positive} = found;
        const takes = spec.kind === "int" || spec.kind === "string" ? 1 : spec.kind === "pair" ? 2 : 0;
        if (i + takes >= words.length && takes > 0) {
            r.refused.push({flag: spelled, why: "expects a value (llama.cpp: expected value for argument)"});
            return;
        }
        const value = takes > 0 ? words[i + 1]! : null;
        i += takes;
        applyCommon(r, spec, spelled, value, positive);
    }
}

function readBench(r: Reading, words: readonly string[], env: readonly [string, string][]): void {
    for (const [name] of env) r.notPriced.push({flag: `${name}=…`, why: "llama-bench reads no LLAMA_ARG_* variables"});
    const overrides: string[] = [];
    for (let i = 0; i < words.length; i++) {
        const spelled = words[i]!;
        const spec = LLAMA_BENCH_ARGS.find((s) => s.names.includes(spelled));
        if (spec == null) {
            r.refused.push({flag: spelled, why: RENAMED[spelled] != null ? `not a flag of this llama.cpp: ${RENAMED[spelled]}` : "not a flag of llama-bench in this llama.cpp"});
            i = skipValueOfUnknown(words, i);
            continue;
        }
        let value: string | null = null;
        if (spec.valueHint != null) {
            if (i + 1 >= words.length) {
                r.refused.push({flag: spelled, why: "expects a value"});
                return;
            }
            value = words[++i]!;
        }
        // every -ot of llama-bench is one more configuration of its sweep
        if (spec.names[0] === "-ot") {
            overrides.push(value!);
            if (overrides.length > 1) {
                r.refused.push({flag: spelled, why: "llama-bench sweeps each -ot as its own configuration; price one: give one -ot (several patterns joined by ;)"});
                continue;
            }
        }
        applyBench(r, spec.names, spelled, value);
    }
}

/** `command` when it can be priced; throws {@link LlamaCommandError} naming every refused flag otherwise. */
export function priceableCommand(command: LlamaCommand): LlamaCommand {
    if (command.refused.length > 0) throw new LlamaCommandError(command.refused);
    return command;
}
