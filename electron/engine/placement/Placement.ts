/**
 * Per-tensor placement: which buffer type ("CPU", "CUDA0", "Vulkan0", "CUDA_Host", …) each weight tensor lives in,
 * and the versioned JSON file format users hand-write or export (`--placement file.json`).
 */

/** The fields of a model's tensor table that placement needs (structurally compatible with the inspector's). */
export interface PlacementTensor {
    /** GGUF tensor name, e.g. `blk.3.ffn_up.weight`. */
    readonly name: string;
    /** Repeating-layer index (`blk.N`), or `null` for tensors outside the layers (`token_embd.weight`, `output.weight`). */
    readonly layer: number | null;
    /** Tensor role without layer and suffix, e.g. `ffn_up`, `attn_q`, `token_embd`, `output`. */
    readonly role: string;
    /** Size of the tensor's data in bytes. */
    readonly bytes: number;
}

/**
 * Where every tensor should live. Plain data, JSON-serialisable as is (for IPC); files use {@link PlacementFileV1}.
 */
export interface Placement {
    /**
     * The buffer type of the device the model is loaded on with every layer offloaded (`gpuLayers` = all): where an
     * unlisted tensor stays, e.g. `"CUDA0"`, `"Vulkan0"`, or `"CPU"` without a GPU. (llama.cpp keeps input-layer
     * tensors such as `token_embd.weight` on the CPU regardless; see `llamaCppNaturalBufferType`.)
     */
    readonly defaultBufferType: string;
    /** Tensor name → buffer type. Tensors not listed stay where llama.cpp puts them without overrides. */
    readonly assignments: Readonly<Record<string, string>>;
}

/** One llama.cpp tensor buffer-type override: the first `pattern` (regex_search) that matches a tensor name wins. */
export interface TensorBufferOverride {
    /** ECMAScript regex source, anchored with `^…$` (llama.cpp searches, it does not match whole names). */
    readonly pattern: string;
    /** Buffer type name, e.g. `"CPU"`, `"CUDA0"`. */
    readonly bufferType: string;
}

/** Selects tensors for a {@link PlacementRule}. Every given criterion must hold; `{}` selects every tensor. */
export interface PlacementRuleMatch {
    /** `[first, last]` (inclusive) repeating layers, or `"all"` for every repeating layer. Omitted: no constraint. */
    readonly layers?: readonly [number, number] | "all";
    /** Tensor roles, e.g. `["ffn_up", "ffn_gate"]`. Omitted: any role. */
    readonly roles?: readonly string[];
    /** Exact tensor names. Omitted: any name. */
    readonly names?: readonly string[];
}

/** A hand-writable rule: put every tensor selected by `match` on `bufferType`. */
export interface PlacementRule {
    readonly match: PlacementRuleMatch;
    readonly bufferType: string;
    /** Free text, ignored. */
    readonly comment?: string;
}

/** Placement file format version this code reads and writes. */
export const PLACEMENT_FILE_VERSION = 1;

/**
 * Placement file, version 1. Rules apply in order (a later rule overrides an earlier one for the tensors both
 * select); entries in `tensors` override every rule.
 *
 * ```json
 * { "version": 1, "defaultBufferType": "CUDA0",
 *   "rules": [{ "match": { "layers": "all", "roles": ["ffn_up", "ffn_gate", "ffn_down"] }, "bufferType": "CPU" }],
 *   "tensors": { "blk.31.attn_q.weight": "CPU" } }
 * ```
 */
export interface PlacementFileV1 {
    readonly version: 1;
    readonly defaultBufferType: string;
    readonly tensors?: Readonly<Record<string, string>>;
    readonly rules?: readonly PlacementRule[];
    /** Free text, ignored. */
    readonly comment?: string;
}

/** A placement file or a placement that does not fit the model; `path` points at the offending field. */
export class PlacementFileError extends Error {
    readonly code = "bad-placement";
    /** JSON path of the offending value, e.g. `tensors["blk.0.ffn_up.weight"]`; `""` for the whole file. */
    readonly path: string;

    constructor(path: string, message: string) {
        super(path === "" ? `placement file: ${message}` : `placement file: ${path}: ${message}`);
        this.name = "PlacementFileError";
        this.path = path;
    }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    if (typeof value === "object") return "an object";
    return `${typeof value} ${String(value)}`;
}

function rejectUnknownKeys(object: JsonObject, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(object)) {
        if (!allowed.includes(key)) {
            const where = path === "" ? "" : `${path}.`;
            throw new PlacementFileError(`${where}${key}`, `unknown field (allowed: ${allowed.join(", ")})`);
        }
    }
}

/**
 * Returns why `name` cannot be a buffer type name, or `null` when it can. Names must be non-empty, without commas,
 * whitespace or control characters (llama.cpp's `--override-tensor` list is comma-separated).
 */
export function bufferTypeNameProblem(name: unknown): string | null {
    if (typeof name !== "string") return `buffer type must be a string, got ${describe(name)}`;
    if (name === "") return "buffer type must not be empty";
    // eslint-disable-next-line no-control-regex
    if (/[,\s\u0000-\u001f\u007f]/.test(name)) {
        return `buffer type ${JSON.stringify(name)} contains a comma, whitespace or a control character`;
    }
    return null;
}

function checkBufferType(value: unknown, path: string): string {
    const problem = bufferTypeNameProblem(value);
    if (problem !== null) throw new PlacementFileError(path, problem);
    return value as string;
}

function checkStringList(value: unknown, path: string): string[] {
    if (!Array.isArray(value) || value.length === 0) {
        throw new PlacementFileError(path, `must be a non-empty array of strings, got ${describe(value)}`);
    }
    return value.map((item, i) => {
        if (typeof item !== "string" || item === "") {
            throw new PlacementFileError(`${path}[${i}]`, `must be a non-empty string, got ${describe(item)}`);
        }
        return item;
    });
}

function checkLayers(value: unknown, path: string): readonly [number, number] | "all" {
    if (value === "all") return "all";
    const ok = Array.isArray(value) && value.length === 2 && value.every((v) => Number.isSafeInteger(v) && v >= 0);
    if (!ok) {
        throw new PlacementFileError(path, `must be "all" or [first, last] (non-negative integers), got ${describe(value)}`);
    }
    const [first, last] = value as [number, number];
    if (first > last) throw new PlacementFileError(path, `first layer ${first} is after last layer ${last}`);
    return [first, last];
}

function checkRule(value: unknown, path: string): PlacementRule {
    if (!isObject(value)) throw new PlacementFileError(path, `must be an object, got ${describe(value)}`);
    rejectUnknownKeys(value, ["match", "bufferType", "comment"], path);
    const match = value["match"];
    if (!isObject(match)) throw new PlacementFileError(`${path}.match`, `must be an object, got ${describe(match)}`);
    rejectUnknownKeys(match, ["layers", "roles", "names"], `${path}.match`);
    const checked: { layers?: readonly [number, number] | "all"; roles?: string[]; names?: string[] } = {};
    if (match["layers"] !== undefined) checked.layers = checkLayers(match["layers"], `${path}.match.layers`);
    if (match["roles"] !== undefined) checked.roles = checkStringList(match["roles"], `${path}.match.roles`);
    if (match["names"] !== undefined) checked.names = checkStringList(match["names"], `${path}.match.names`);
    if (value["comment"] !== undefined && typeof value["comment"] !== "string") {
        throw new PlacementFileError(`${path}.comment`, `must be a string, got ${describe(value["comment"])}`);
    }
    return { match: checked, bufferType: checkBufferType(value["bufferType"], `${path}.bufferType`) };
}

/**
 * Checks the structure of a parsed placement file (no model needed) and returns it typed. Throws
 * {@link PlacementFileError} naming the offending field.
 */
export function parsePlacementFile(value: unknown): PlacementFileV1 {
    if (!isObject(value)) throw new PlacementFileError("", `must be a JSON object, got ${describe(value)}`);
    if (value["version"] !== PLACEMENT_FILE_VERSION) {
        throw new PlacementFileError("version", `unsupported version ${describe(value["version"])} (this app reads version ${PLACEMENT_FILE_VERSION})`);
    }
    rejectUnknownKeys(value, ["version", "defaultBufferType", "tensors", "rules", "comment"], "");
    const defaultBufferType = checkBufferType(value["defaultBufferType"], "defaultBufferType");
    if (value["comment"] !== undefined && typeof value["comment"] !== "string") {
        throw new PlacementFileError("comment", `must be a string, got ${describe(value["comment"])}`);
    }
    let tensors: Record<string, string> | undefined;
    if (value["tensors"] !== undefined) {
        const raw = value["tensors"];
        if (!isObject(raw)) throw new PlacementFileError("tensors", `must be an object of tensor name → buffer type, got ${describe(raw)}`);
        tensors = Object.fromEntries(
            Object.entries(raw).map(([name, bufferType]) => [name, checkBufferType(bufferType, `tensors[${JSON.stringify(name)}]`)])
        );
    }
    let rules: PlacementRule[] | undefined;
    if (value["rules"] !== undefined) {
        if (!Array.isArray(value["rules"])) throw new PlacementFileError("rules", `must be an array, got ${describe(value["rules"])}`);
        rules = value["rules"].map((rule, i) => checkRule(rule, `rules[${i}]`));
    }
    return { version: PLACEMENT_FILE_VERSION, defaultBufferType, ...(tensors && { tensors }), ...(rules && { rules }) };
}

function ruleSelects(match: PlacementRuleMatch, tensor: PlacementTensor): boolean {
    if (match.layers !== undefined) {
        if (tensor.layer === null) return false;
        if (match.layers !== "all" && (tensor.layer < match.layers[0] || tensor.layer > match.layers[1])) return false;
    }
    if (match.roles !== undefined && !match.roles.includes(tensor.role)) return false;
    if (match.names !== undefined && !match.names.includes(tensor.name)) return false;
    return true;
}

function knownRoles(tensors: readonly PlacementTensor[]): string {
    return [...new Set(tensors.map((t) => t.role))].join(", ");
}

/**
 * Expands rules against a model's tensor list into tensor name → buffer type (later rules win). A rule that selects
 * no tensor, or names a tensor the model lacks, is an error: it is almost always a typo.
 */
export function expandPlacementRules(rules: readonly PlacementRule[], tensors: readonly PlacementTensor[]): Record<string, string> {
    const names = new Set(tensors.map((t) => t.name));
    const assignments = new Map<string, string>();
    rules.forEach((rule, i) => {
        for (const name of rule.match.names ?? []) {
            if (!names.has(name)) throw new PlacementFileError(`rules[${i}].match.names`, `no tensor named ${JSON.stringify(name)} in this model`);
        }
        const selected = tensors.filter((t) => ruleSelects(rule.match, t));
        if (selected.length === 0) {
            throw new PlacementFileError(`rules[${i}].match`, `selects no tensor of this model (its roles: ${knownRoles(tensors)})`);
        }
        for (const tensor of selected) assignments.set(tensor.name, rule.bufferType);
    });
    return Object.fromEntries(assignments);
}

/**
 * Checks that every tensor a placement names exists in the model (and that names in the model are unique). Throws
 * {@link PlacementFileError}.
 */
export function validatePlacement(placement: Placement, tensors: readonly Pick<PlacementTensor, "name">[]): void {
    checkBufferType(placement.defaultBufferType, "defaultBufferType");
    const names = new Set<string>();
    for (const tensor of tensors) {
        if (names.has(tensor.name)) throw new PlacementFileError("", `the model lists tensor ${JSON.stringify(tensor.name)} twice`);
        names.add(tensor.name);
    }
    for (const [name, bufferType] of Object.entries(placement.assignments)) {
        const path = `tensors[${JSON.stringify(name)}]`;
        if (!names.has(name)) {
            throw new PlacementFileError(path, `no such tensor in this model (it has ${names.size} tensors; placement files are per model)`);
        }
        checkBufferType(bufferType, path);
    }
}

/**
 * Reads a parsed placement file against the model's tensor list: checks it, expands its rules, applies its
 * explicit tensor entries, and rejects unknown tensors. Throws {@link PlacementFileError}.
 */
export function placementFromValue(value: unknown, tensors: readonly PlacementTensor[]): Placement {
    const file = parsePlacementFile(value);
    const merged = new Map(Object.entries(expandPlacementRules(file.rules ?? [], tensors)));
    for (const [name, bufferType] of Object.entries(file.tensors ?? {})) merged.set(name, bufferType);
    const placement: Placement = { defaultBufferType: file.defaultBufferType, assignments: Object.fromEntries(merged) };
    validatePlacement(placement, tensors);
    return placement;
}

/** {@link placementFromValue} on JSON text (the contents of a `--placement` file). */
export function placementFromJson(text: string, tensors: readonly PlacementTensor[]): Placement {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch (error) {
        throw new PlacementFileError("", `not valid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    return placementFromValue(value, tensors);
}

/** The placement as a version-1 file object with an explicit `tensors` table. */
export function placementToFile(placement: Placement): PlacementFileV1 {
    return {
        version: PLACEMENT_FILE_VERSION,
        defaultBufferType: placement.defaultBufferType,
        tensors: Object.fromEntries(Object.entries(placement.assignments))
    };
}

/** The placement as JSON text (2-space indented, trailing newline) that {@link placementFromJson} reads back. */
export function placementToJson(placement: Placement): string {
    return `${JSON.stringify(placementToFile(placement), null, 2)}\n`;
}
