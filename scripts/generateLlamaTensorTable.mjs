// Generates llama.cpp's tensor table as TypeScript, from the llama.cpp source node-llama-cpp's binaries were built from
// (build/native/llama.cpp, extracted by native/install.mjs):
//   electron/engine/gguf/llamaTensorTable.ts  every tensor name pattern of LLM_TENSOR_NAMES (src/llama-arch.cpp) with
//                                             its layer class and ggml op from LLM_TENSOR_INFOS
//   electron/engine/gguf/llamaArchTensors.ts  per architecture (LLM_ARCH_NAMES), the `.weight` tensors its
//                                             load_arch_tensors creates (src/models/*.cpp, the class that
//                                             llama_model_mapping in src/llama-model.cpp builds) and their dimensions
// Usage: node scripts/generateLlamaTensorTable.mjs [llama.cpp dir]   (--check: exit 1 when the committed files differ)
// electron/engine/gguf/llamaTensorTable.test.ts regenerates both and fails when they drifted from the source.
import {readFile, readdir, writeFile} from "node:fs/promises";
import path from "node:path";
import {fileURLToPath} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_LLAMA_CPP_DIR = path.join(root, "build/native/llama.cpp");
export const TABLE_FILE = path.join(root, "electron/engine/gguf/llamaTensorTable.ts");
export const ARCH_FILE = path.join(root, "electron/engine/gguf/llamaArchTensors.ts");

const layerClasses = {LLM_TENSOR_LAYER_INPUT: "input", LLM_TENSOR_LAYER_REPEATING: "repeating", LLM_TENSOR_LAYER_OUTPUT: "output"};

/** The `{ … }` initializer of the C++ map declared as `name`, without comments. */
function mapBody(text, name) {
    const start = text.indexOf(`${name} = {`);
    if (start < 0) throw new Error(`${name} not found`);
    const end = text.indexOf("\n};", start);
    if (end < 0) throw new Error(`end of ${name} not found`);
    return stripComments(text.slice(start, end));
}

function stripComments(text) {
    return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "");
}

/**
 * A tensor's role: its name pattern without the layer number (`blk.%d.attn_q` → `attn_q`, `dec.blk.%d.attn_q` →
 * `dec.attn_q`, `convnext.%d.dw` → `convnext.dw`); the old per-expert names (`blk.%d.ffn_up.%d`) keep their expert
 * placeholder (`ffn_up.%d`).
 */
function roleOf(pattern) {
    return pattern.replace(/(^|\.)blk\.%d\./, "$1").replace(/\.%d\./g, ".");
}

/** Splits `a, f(b, c), d` at its top-level commas. */
function topLevelItems(text) {
    const items = [];
    let depth = 0;
    let current = "";
    for (const ch of text) {
        if (ch === "(") depth++;
        if (ch === ")") depth--;
        if (ch === "," && depth === 0) {
            items.push(current.trim());
            current = "";
        } else current += ch;
    }
    if (current.trim() !== "") items.push(current.trim());
    return items;
}

/** The body of the function whose definition starts at `start` (from its first `{` to the matching `}`). */
function functionBody(text, start) {
    const open = text.indexOf("{", start);
    let depth = 0;
    for (let i = open; i < text.length; i++) {
        if (text[i] === "{") depth++;
        else if (text[i] === "}" && --depth === 0) return text.slice(open + 1, i);
    }
    throw new Error("unbalanced braces");
}

// create_tensor(tn(LLM_TENSOR_X, "weight", i), {dims}, flags) and tn(LLM_TENSOR_X, i) (no suffix: the name is the bare pattern)
const createTensorCall = /create_tensor\(\s*tn\(\s*(LLM_TENSOR_\w+)\s*(?:,\s*"(\w+)")?[^)]*\)\s*,\s*\{([^}]*)\}/g;
// source: llama_model_base::create_tensor_qkv and create_tensor_gate_up_exps in src/llama-model.cpp
const helperTensors = {
    create_tensor_qkv: [["LLM_TENSOR_ATTN_QKV", 2], ["LLM_TENSOR_ATTN_Q", 2], ["LLM_TENSOR_ATTN_K", 2], ["LLM_TENSOR_ATTN_V", 2]],
    create_tensor_gate_up_exps: [["LLM_TENSOR_FFN_GATE_UP_EXPS", 3], ["LLM_TENSOR_FFN_GATE_EXPS", 3], ["LLM_TENSOR_FFN_UP_EXPS", 3]]
};

/** Reads the llama.cpp source under `dir` and returns the two modules' text. */
export async function generateLlamaTensorTable(dir = DEFAULT_LLAMA_CPP_DIR) {
    const archText = await readFile(path.join(dir, "src/llama-arch.cpp"), "utf8");

    const names = new Map();
    for (const m of mapBody(archText, "LLM_TENSOR_NAMES").matchAll(/\{\s*(LLM_TENSOR_\w+)\s*,\s*"([^"]+)"\s*\}/g))
        if (!names.has(m[1])) names.set(m[1], m[2]); // a std::map initializer keeps the first of a repeated key
    const infos = new Map();
    for (const m of mapBody(archText, "LLM_TENSOR_INFOS").matchAll(/\{\s*(LLM_TENSOR_\w+)\s*,\s*\{\s*(LLM_TENSOR_LAYER_\w+)\s*,\s*GGML_OP_(\w+)\s*\}\s*\}/g)) {
        const layer = layerClasses[m[2]];
        if (layer == null) throw new Error(`unknown layer class ${m[2]}`);
        if (!infos.has(m[1])) infos.set(m[1], {layer, op: m[3]});
    }
    const archNames = new Map([...mapBody(archText, "LLM_ARCH_NAMES").matchAll(/\{\s*(LLM_ARCH_\w+)\s*,\s*"([^"]+)"\s*\}/g)].map((m) => [m[1], m[2]]));
    if (names.size < 100 || infos.size < 100 || archNames.size < 50)
        throw new Error(`suspiciously few entries (${names.size} names, ${infos.size} infos, ${archNames.size} architectures): has the source's format changed?`);

    const rows = [...names].map(([id, pattern]) => {
        const info = infos.get(id);
        return {id: id.slice("LLM_TENSOR_".length), name: pattern, role: roleOf(pattern), layer: info?.layer ?? null, op: info?.op ?? null};
    });

    const {archTensors, tiedOutput} = await perArchitectureTensors(dir, archNames, names);
    return {table: renderTable(rows), archTensors: renderArchTensors(archTensors, tiedOutput)};
}

/**
 * Per architecture name: the distinct `[tensor id, dimensions]` of the `.weight` tensors its loader creates, and the
 * architectures whose loader, without an `output.weight`, creates the output from `token_embd` (TENSOR_DUPLICATED).
 */
async function perArchitectureTensors(dir, archNames, names) {
    const modelText = stripComments(await readFile(path.join(dir, "src/llama-model.cpp"), "utf8"));
    const mapping = functionBody(modelText, modelText.indexOf("llama_model_mapping("));
    const classOfArch = new Map();
    let pendingCases = [];
    for (const m of mapping.matchAll(/case\s+(LLM_ARCH_\w+)\s*:|return\s+new\s+(llama_model_\w+)\s*\(/g)) {
        if (m[1] != null) pendingCases.push(m[1]);
        else {
            for (const arch of pendingCases) classOfArch.set(arch, m[2]);
            pendingCases = [];
        }
    }

    const header = stripComments(await readFile(path.join(dir, "src/models/models.h"), "utf8"));
    const parentOf = new Map([...header.matchAll(/struct\s+(llama_model_\w+)\s*:\s*public\s+(llama_model_\w+)/g)].map((m) => [m[1], m[2]]));

    const loaders = new Map();
    const duplicating = new Set();
    const modelsDir = path.join(dir, "src/models");
    for (const file of (await readdir(modelsDir)).filter((f) => f.endsWith(".cpp")).sort()) {
        const text = stripComments(await readFile(path.join(modelsDir, file), "utf8"));
        for (const m of text.matchAll(/void\s+(llama_model_\w+)::load_arch_tensors\s*\(/g)) {
            const body = functionBody(text, m.index);
            loaders.set(m[1], tensorsCreated(body, names));
            if (tiedOutputCall.test(body)) duplicating.add(m[1]);
        }
    }

    const archTensors = {};
    const tiedOutput = [];
    for (const [archId, archName] of [...archNames].sort((a, b) => a[1].localeCompare(b[1]))) {
        let cls = classOfArch.get(archId);
        while (cls != null && !loaders.has(cls)) cls = parentOf.get(cls);
        if (cls == null) continue; // no model class (LLM_ARCH_UNKNOWN)
        archTensors[archName] = loaders.get(cls);
        if (duplicating.has(cls)) tiedOutput.push(archName);
    }
    if (Object.keys(archTensors).length < 50) throw new Error(`only ${Object.keys(archTensors).length} architectures have a tensor loader: has the source's format changed?`);
    if (tiedOutput.length < 50) throw new Error(`only ${tiedOutput.length} architectures tie the output to token_embd: has the source's format changed?`);
    return {archTensors, tiedOutput};
}

// create_tensor(tn(LLM_TENSOR_TOKEN_EMBD, "weight"), {n_embd, n_vocab}, TENSOR_DUPLICATED): the output layer's copy of token_embd
const tiedOutputCall = /create_tensor\(\s*tn\(\s*LLM_TENSOR_TOKEN_EMBD\s*,\s*"weight"\s*\)\s*,\s*\{[^}]*\}\s*,[^;]*\bTENSOR_DUPLICATED\b/;

/**
 * The weight tensors one `load_arch_tensors` body creates. Besides `create_tensor(tn(LLM_TENSOR_X, …), {…})` and the
 * helpers, two indirections occur: a name kept in a variable (`const auto v = tn(LLM_TENSOR_X, "weight", i);
 * create_tensor(v, {…})`) and a lambda taking the tensor (`auto conv = [&](llm_tensor tid) { create_tensor(tn(tid, …),
 * {…}) }; conv(LLM_TENSOR_X)`). Any other call is an error, so a change of the source's form is noticed.
 */
function tensorsCreated(body, names) {
    const seen = new Map();
    const add = (enumName, dims) => {
        if (!names.has(enumName)) throw new Error(`${enumName} is created but has no name in LLM_TENSOR_NAMES`);
        const id = enumName.slice("LLM_TENSOR_".length);
        seen.set(`${id}/${dims}`, [id, dims]);
    };
    let understood = 0;
    for (const m of body.matchAll(createTensorCall)) {
        understood++;
        if ((m[2] ?? "weight") === "weight") add(m[1], topLevelItems(m[3]).length);
    }
    for (const m of body.matchAll(/const\s+auto\s+(\w+)\s*=\s*tn\(\s*(LLM_TENSOR_\w+)\s*,\s*"weight"[^)]*\)\s*;/g))
        for (const call of body.matchAll(new RegExp(`create_tensor\\(\\s*${m[1]}\\s*,\\s*\\{([^}]*)\\}`, "g"))) {
            understood++;
            add(m[2], topLevelItems(call[1]).length);
        }
    for (const m of body.matchAll(/auto\s+(\w+)\s*=\s*\[[^\]]*\]\s*\(\s*llm_tensor\s+(\w+)\s*\)/g)) {
        const lambda = functionBody(body, m.index);
        const calls = [...lambda.matchAll(new RegExp(`create_tensor\\(\\s*tn\\(\\s*${m[2]}\\s*,\\s*"weight"[^)]*\\)\\s*,\\s*\\{([^}]*)\\}`, "g"))];
        understood += calls.length;
        for (const use of body.matchAll(new RegExp(`\\b${m[1]}\\(\\s*(LLM_TENSOR_\\w+)\\s*\\)`, "g")))
            for (const call of calls) add(use[1], topLevelItems(call[1]).length);
    }
    const calls = body.match(/\bcreate_tensor\(/g)?.length ?? 0;
    if (understood !== calls) throw new Error(`${calls - understood} create_tensor calls of a load_arch_tensors were not understood`);
    for (const [helper, tensors] of Object.entries(helperTensors))
        if (body.includes(`${helper}(`)) for (const [enumName, dims] of tensors) add(enumName, dims);
    return [...seen.values()].sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]);
}

const banner = (what) => [
    "// Generated by scripts/generateLlamaTensorTable.mjs: do not edit. From the llama.cpp source node-llama-cpp's binaries",
    `// were built from (build/native/llama.cpp), ${what}.`,
    ""
];

function renderTable(rows) {
    const q = (value) => (value == null ? "null" : JSON.stringify(value));
    return [
        ...banner("src/llama-arch.cpp: LLM_TENSOR_NAMES, LLM_TENSOR_INFOS"),
        "/** Where llama.cpp places a tensor (llm_tensor_layer): with the input layer, a repeating layer `blk.N`, or the output. */",
        "export type LlamaTensorLayer = \"input\" | \"repeating\" | \"output\";",
        "",
        "/**",
        " * Every tensor llama.cpp names (LLM_TENSOR_NAMES): `id` is the llm_tensor without `LLM_TENSOR_`, `name` its name pattern",
        " * (`%d`: the layer, then the expert), `role` the pattern without the layer, and `layer` and `op` its llm_tensor_info",
        " * (LLM_TENSOR_INFOS: the layer class and the ggml op that uses the weight, `null` where llama.cpp has none and refuses",
        " * to create the tensor). A `.bias` of a tensor is used by GGML_OP_ADD (ADD_ID for a MUL_MAT_ID weight).",
        " */",
        "export const LLAMA_TENSORS = [",
        ...rows.map((r) => `    {id: ${q(r.id)}, name: ${q(r.name)}, role: ${q(r.role)}, layer: ${q(r.layer)}, op: ${q(r.op)}},`),
        "] as const;",
        ""
    ].join("\n");
}

function renderArchTensors(archTensors, tiedOutput) {
    return [
        ...banner("src/models/*.cpp: load_arch_tensors"),
        "/**",
        " * Per architecture (`general.architecture`), the weights the loader of its model class (llama_model_mapping in",
        " * src/llama-model.cpp) may create, optional ones included: `.weight` tensors and bare names such as `blk.N.ssm_a`, as",
        " * `[id, dimensions]` with `id` an entry of LLAMA_TENSORS (llamaTensorTable.ts). A tensor created with different",
        " * dimension counts in different branches appears once per count.",
        " */",
        "export const LLAMA_ARCH_TENSORS: Readonly<Record<string, readonly (readonly [string, number])[]>> = {",
        ...Object.entries(archTensors).map(([arch, list]) =>
            `    ${JSON.stringify(arch)}: [${list.map(([id, dims]) => `[${JSON.stringify(id)}, ${dims}]`).join(", ")}],`),
        "};",
        "",
        "/**",
        " * Architectures whose loader, where the file has no `output.weight`, creates the output matmul's weight from",
        " * `token_embd` with TENSOR_DUPLICATED: a second copy on the output layer's device (none where that is the CPU, whose",
        " * buffer already holds it; source: llama_model_loader::create_tensor).",
        " */",
        "export const LLAMA_TIED_OUTPUT_ARCHS: ReadonlySet<string> = new Set([",
        ...wrapNames(tiedOutput),
        "]);",
        ""
    ].join("\n");
}

/** Quoted names, comma-separated, in lines of at most 120 characters. */
function wrapNames(names) {
    const lines = [];
    let line = "   ";
    for (const name of names) {
        const item = ` ${JSON.stringify(name)},`;
        if (line.length + item.length > 120) {
            lines.push(line);
            line = "   ";
        }
        line += item;
    }
    if (line.trim() !== "") lines.push(line.replace(/,$/, ""));
    return lines;
}

if (process.argv[1] != null && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const args = process.argv.slice(2);
    const check = args.includes("--check");
    const dir = args.find((arg) => !arg.startsWith("--")) ?? DEFAULT_LLAMA_CPP_DIR;
    const {table, archTensors} = await generateLlamaTensorTable(dir);
    if (check) {
        const same = await Promise.all([[TABLE_FILE, table], [ARCH_FILE, archTensors]]
            .map(async ([file, text]) => (await readFile(file, "utf8").catch(() => "")) === text));
        if (same.includes(false)) {
            console.error("the committed tensor table differs from the source: run node scripts/generateLlamaTensorTable.mjs");
            process.exit(1);
        }
    } else {
        await writeFile(TABLE_FILE, table);
        await writeFile(ARCH_FILE, archTensors);
        console.log(`wrote ${path.relative(root, TABLE_FILE)} and ${path.relative(root, ARCH_FILE)}`);
    }
}
