// Generates llama.cpp's command-line flag table as TypeScript, from the llama.cpp source node-llama-cpp's binaries were
// built from (build/native/llama.cpp, extracted by native/install.mjs):
//   electron/engine/llamaArgs/llamaArgTable.ts  every `add_opt(common_arg(…))` of common/arg.cpp
//                                               (common_params_parser_init): its names, negated names, how many values
//                                               it takes (from its handler's signature), its environment variable, the
//                                               programs it belongs to (set_examples / set_excludes), the values its
//                                               handler accepts where it lists them, and the message of a removed flag
// Usage: node scripts/generateLlamaArgTable.mjs [llama.cpp dir]   (--check: exit 1 when the committed file differs)
// electron/engine/llamaArgs/llamaArgTable.test.ts regenerates it and fails when it drifted from the source.
import {readFile, writeFile} from "node:fs/promises";
import path from "node:path";
import {fileURLToPath} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_LLAMA_CPP_DIR = path.join(root, "build/native/llama.cpp");
export const TABLE_FILE = path.join(root, "electron/engine/llamaArgs/llamaArgTable.ts");

/** The index just past the bracket that closes the one at `open` (strings and comments skipped). */
function closing(text, open) {
    const pairs = {"(": ")", "{": "}", "[": "]"};
    const stack = [];
    for (let i = open; i < text.length; i++) {
        const ch = text[i];
        if (ch === '"' || ch === "'") {
            for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === "\\") i++;
            continue;
        }
        if (ch === "/" && text[i + 1] === "/") {
            i = text.indexOf("\n", i);
            continue;
        }
        if (ch === "/" && text[i + 1] === "*") {
            i = text.indexOf("*/", i) + 1;
            continue;
        }
        if (pairs[ch] != null) stack.push(pairs[ch]);
        else if (ch === ")" || ch === "}" || ch === "]") {
            if (stack.pop() !== ch) throw new Error(`unbalanced ${ch} at ${i}`);
            if (stack.length === 0) return i + 1;
        }
    }
    throw new Error(`no closing bracket for ${open}`);
}

/** Splits a call's arguments at their top-level commas (brackets, strings and comments respected). */
function topLevelItems(text) {
    const items = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
        const ch = text[i];
        if (ch === '"' || ch === "'") {
            for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === "\\") i++;
        } else if (ch === "/" && text[i + 1] === "/") i = text.indexOf("\n", i);
        else if (ch === "/" && text[i + 1] === "*") i = text.indexOf("*/", i) + 1;
        else if (ch === "(" || ch === "{" || ch === "[") i = closing(text, i) - 1;
        else if (ch === ",") {
            items.push(text.slice(start, i).trim());
            start = i + 1;
        }
    }
    items.push(text.slice(start).trim());
    // an item's leading comment (`// note: …` before the names) is not part of it
    return items.map((item) => item.replace(/^(?:\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)\s*/g, "").trim()).filter((item) => item !== "");
}

/** The C string literals of `text`, adjacent ones joined as C joins them. */
function stringLiterals(text) {
    return [...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c)));
}

// source: common_arg's constructors (common/arg.h): the handler's parameters say what the flag takes
const HANDLER_KINDS = [
    [/^\[\]\s*\(\s*common_params\s*&\s*(?:\w+)?\s*\)/, "flag"],
    [/^\[\]\s*\(\s*common_params\s*&\s*\w*\s*,\s*bool\s*\w*\s*\)/, "bool"],
    [/^\[\]\s*\(\s*common_params\s*&\s*\w*\s*,\s*int\s*\w*\s*\)/, "int"],
    [/^\[\]\s*\(\s*common_params\s*&\s*\w*\s*,\s*const\s+std::string\s*&\s*\w*\s*,\s*const\s+std::string\s*&\s*\w*\s*\)/, "pair"],
    [/^\[\]\s*\(\s*common_params\s*&\s*\w*\s*,\s*const\s+std::string\s*&\s*\w*\s*\)/, "string"]
];

/** The ggml type names of `kv_cache_types` (what `kv_cache_type_from_str` accepts). */
function kvCacheTypes(text) {
    const start = text.indexOf("kv_cache_types = {");
    if (start < 0) throw new Error("kv_cache_types not found");
    const body = text.slice(start, closing(text, text.indexOf("{", start)));
    return [...body.matchAll(/GGML_TYPE_(\w+)/g)].map((m) => m[1].toLowerCase());
}

/**
 * The values a handler accepts, where it lists them and refuses the rest: `value == "x"` chains ending in a throw,
 * `is_truthy` / `is_falsey` / `is_autoy` (common_arg_utils in common/arg.cpp), `kv_cache_type_from_str`. `null`
 * where the handler takes anything or parses it otherwise.
 */
function acceptedValues(body, kvTypes) {
    if (/kv_cache_type_from_str\(/.test(body)) return kvTypes;
    const throws = /\bthrow\b/.test(body);
    const values = new Set();
    if (/is_truthy\(/.test(body)) for (const v of ["on", "enabled", "true", "1"]) values.add(v);
    if (/is_falsey\(/.test(body)) for (const v of ["off", "disabled", "false", "0"]) values.add(v);
    if (/is_autoy\(/.test(body)) for (const v of ["auto", "-1"]) values.add(v);
    for (const m of body.matchAll(/\bvalue\s*==\s*"((?:[^"\\]|\\.)*)"/g)) values.add(m[1]);
    // a comparison that falls through to something else (a number, a file) is not a closed list
    if (!throws || values.size === 0 || /std::sto[il]|string_split|parse_|read_file|std::ifstream/.test(body)) return null;
    return [...values];
}

/** llama-bench's flags from its print_usage: `printf("  -a, --bb <hint> …")` lines. */
async function benchArgs(dir) {
    const text = await readFile(path.join(dir, "tools/llama-bench/llama-bench.cpp"), "utf8");
    const start = text.indexOf("static void print_usage");
    if (start < 0) throw new Error("print_usage not found in llama-bench.cpp");
    const body = text.slice(start, closing(text, text.indexOf("{", start)));
    const flags = [];
    for (const m of body.matchAll(/printf\(\s*" {2}((?:-{1,2}[\w-]+(?:,\s*|\s+))*-{1,2}[\w-]+)(?:\s+(<[^>]*>))?/g)) {
        const names = m[1].split(/,?\s+/).filter((name) => name.startsWith("-"));
        flags.push({names, valueHint: m[2] ?? null});
    }
    if (flags.length < 30) throw new Error(`only ${flags.length} llama-bench flags found`);
    return flags;
}

/** Reads common/arg.cpp under `dir` and returns the module's text. */
export async function generateLlamaArgTable(dir = DEFAULT_LLAMA_CPP_DIR) {
    const text = await readFile(path.join(dir, "common/arg.cpp"), "utf8");
    const kvTypes = kvCacheTypes(text);
    const entries = [];
    for (let at = text.indexOf("add_opt(common_arg("); at >= 0; at = text.indexOf("add_opt(common_arg(", at + 1)) {
        const argOpen = at + "add_opt(common_arg".length;
        const argEnd = closing(text, argOpen);
        const call = text.slice(argOpen + 1, argEnd - 1);
        const chain = text.slice(argEnd, closing(text, at + "add_opt".length) - 1);
        const items = topLevelItems(call);
        const lists = [];
        while (items.length > 0 && items[0].startsWith("{")) lists.push(stringLiterals(items.shift()));
        // common_arg(names, [negated names], [value hint, [second hint]], help, handler): the handler is the last item
        const lambda = items.at(-1) ?? "";
        if (lists.length === 0 || !lambda.startsWith("[")) throw new Error(`common_arg at ${at} has no names or no handler`);
        const signature = lambda.replace(/\/\*[\s\S]*?\*\//g, "");
        const kind = HANDLER_KINDS.find(([re]) => re.test(signature))?.[1];
        if (kind == null) throw new Error(`unknown handler signature for ${lists[0].join("/")}: ${lambda.slice(0, 80)}`);
        const bodyOpen = lambda.indexOf("{");
        const body = lambda.slice(bodyOpen, closing(lambda, bodyOpen));
        const hints = kind === "string" || kind === "int" || kind === "pair" ? stringLiterals(items[0] ?? "") : [];
        const removed = /\barg_removed\(\s*"((?:[^"\\]|\\.)*)"/.exec(body)?.[1] ?? null;
        const examplesOf = (method) => {
            const m = new RegExp(`\\.${method}\\(\\{([^}]*)\\}\\)`).exec(chain);
            return m == null ? null : [...m[1].matchAll(/LLAMA_EXAMPLE_(\w+)/g)].map((e) => e[1].toLowerCase());
        };
        entries.push({
            names: lists[0],
            negated: lists[1] ?? [],
            kind,
            valueHint: hints[0] ?? null,
            env: /\.set_env\(\s*"([^"]+)"\s*\)/.exec(chain)?.[1] ?? null,
            examples: examplesOf("set_examples") ?? ["common"],
            excludes: examplesOf("set_excludes") ?? [],
            values: kind === "string" ? acceptedValues(body, kvTypes) : null,
            removed
        });
    }
    if (entries.length < 100) throw new Error(`only ${entries.length} flags found in common/arg.cpp`);
    const bench = await benchArgs(dir);
    const lines = [
        "// Generated by scripts/generateLlamaArgTable.mjs: do not edit. From the llama.cpp source node-llama-cpp's binaries",
        "// were built from: common/arg.cpp, common_params_parser_init (every add_opt(common_arg(…)) in source order).",
        "",
        "/** How many values a flag takes, from its handler's signature (common_arg's constructors, common/arg.h). */",
        "export type LlamaArgKind = \"flag\" | \"bool\" | \"int\" | \"string\" | \"pair\";",
        "",
        "/** One `common_arg` of common/arg.cpp. */",
        "export type LlamaArgSpec = {",
        "    /** Its spellings (`-ngl`, `--gpu-layers`, …). */",
        "    readonly names: readonly string[];",
        "    /** The spellings that set a `bool` flag false (`--no-mmap`, `-nkvo`). */",
        "    readonly negated: readonly string[];",
        "    /** `flag`: no value; `bool`: no value, true or false by the spelling; `int`/`string`: one value; `pair`: two. */",
        "    readonly kind: LlamaArgKind;",
        "    readonly valueHint: string | null;",
        "    /** The environment variable llama.cpp reads it from (`LLAMA_ARG_…`), applied before the command line. */",
        "    readonly env: string | null;",
        "    /** The programs it belongs to (`LLAMA_EXAMPLE_*` lower-cased; `common`: every program but llama-download). */",
        "    readonly examples: readonly string[];",
        "    readonly excludes: readonly string[];",
        "    /** The only values its handler accepts, where it lists them; `null` where it takes others. */",
        "    readonly values: readonly string[] | null;",
        "    /** llama.cpp's message when the flag was removed (`arg_removed`), else `null`. */",
        "    readonly removed: string | null;",
        "};",
        "",
        "export const LLAMA_ARGS: readonly LlamaArgSpec[] = [",
        ...entries.map((e) => `    ${JSON.stringify(e)},`),
        "];",
        "",
        "/**",
        " * llama-bench's own flags (it does not use common/arg.cpp): tools/llama-bench/llama-bench.cpp, print_usage. A",
        " * `valueHint` means the flag takes a value; most take a comma-separated list of values to sweep.",
        " */",
        "export const LLAMA_BENCH_ARGS: readonly {readonly names: readonly string[]; readonly valueHint: string | null}[] = [",
        ...bench.map((e) => `    ${JSON.stringify(e)},`),
        "];",
        ""
    ];
    return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    const args = process.argv.slice(2);
    const check = args.includes("--check");
    const dir = args.find((a) => !a.startsWith("--")) ?? DEFAULT_LLAMA_CPP_DIR;
    const table = await generateLlamaArgTable(dir);
    if (check) {
        const committed = await readFile(TABLE_FILE, "utf8").catch(() => "");
        if (committed !== table) {
            console.error("the committed flag table differs from the source: run node scripts/generateLlamaArgTable.mjs");
            process.exit(1);
        }
    } else {
        await writeFile(TABLE_FILE, table);
        console.log(`wrote ${TABLE_FILE}`);
    }
}
