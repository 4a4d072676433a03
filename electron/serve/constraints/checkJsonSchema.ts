/**
 * A JSON schema checked before llama.cpp converts it (common_chat_schema_from_json in common/json-schema.cpp, then
 * json_schema_to_grammar): within STRUCTURE_LIMITS — its nesting, its subschemas with every `$ref` counted as the schema
 * it names (llama.cpp's schema walks, such as common_chat_schema::value_types, follow a `$ref` each time they meet it,
 * and a `"type"` list builds the schema once per type), the values of its enums — and not contradicting itself:
 * bounds that leave no value (an integer range 5..3, `minLength` over `maxLength`, `minItems` over `maxItems`), an
 * empty `enum`, a required property an object cannot have. llama.cpp would turn a contradiction into a grammar with no
 * way forward, which ends the reply (or, for a repetition, never finishes expanding). Each refusal names the path in the
 * schema (`#/properties/a/maximum`).
 */
import {STRUCTURE_LIMITS} from "../../contract/limits.js";
import {GrammarRefusal} from "./GrammarRefusal.js";

type Limits = Pick<typeof STRUCTURE_LIMITS, "schemaDepth" | "schemaNodes" | "schemaEnumValues">;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value != null && !Array.isArray(value);

/** The keywords whose values are subschemas, as llama.cpp's schema builder reads them. */
const SCHEMA_KEYWORDS = ["additionalProperties", "items"] as const;
const SCHEMA_LIST_KEYWORDS = ["anyOf", "oneOf", "allOf", "prefixItems"] as const;
const SCHEMA_MAP_KEYWORDS = ["properties", "$defs", "definitions"] as const;

/** Refuses (GrammarRefusal) a schema past `limits` or contradicting itself; returns when it is fine. */
export function checkJsonSchema(schema: unknown, limits: Limits = STRUCTURE_LIMITS): void {
    new SchemaCheck(schema, limits).run();
}

class SchemaCheck {
    private enumValues = 0;
    /** Subschemas counted under each `$ref` (with the ones it names), once known; `null` while being counted (a cycle). */
    private readonly refCounts = new Map<string, number | null>();

    constructor(private readonly root: unknown, private readonly limits: Limits) {}

    run(): void {
        const nodes = this.visit(this.root, "#", 0);
        if (nodes > this.limits.schemaNodes)
            throw this.tooMany();
    }

    private tooMany(): GrammarRefusal {
        return new GrammarRefusal("grammar_limit", `the schema has more than ${this.limits.schemaNodes} subschemas once each \`$ref\` is counted as the ` +
            "schema it names (llama.cpp follows a `$ref` each time it meets one)");
    }

    /** Checks `schema` at `path` and returns how many subschemas it counts (itself included), `$ref`s followed. */
    private visit(schema: unknown, path: string, depth: number): number {
        if (depth > this.limits.schemaDepth)
            throw new GrammarRefusal("grammar_limit", `the schema nests subschemas more than ${this.limits.schemaDepth} deep (at ${shortPath(path)})`);
        if (typeof schema === "boolean")
            return 1;
        if (!isObject(schema))
            throw new GrammarRefusal("grammar_syntax", `${shortPath(path)} must be a schema (an object)`);
        if (typeof schema.$ref === "string")
            return this.ref(schema.$ref, path, depth);
        this.contradictions(schema, path);
        let count = 1;
        const add = (value: number) => {
            count += value;
            if (count > this.limits.schemaNodes)
                throw this.tooMany();
        };
        for (const keyword of SCHEMA_KEYWORDS)
            if (isObject(schema[keyword]))
                add(this.visit(schema[keyword], `${path}/${keyword}`, depth + 1));
        for (const keyword of SCHEMA_LIST_KEYWORDS) {
            const list = schema[keyword];
            if (Array.isArray(list))
                list.forEach((item, index) => add(this.visit(item, `${path}/${keyword}/${index}`, depth + 1)));
        }
        if (Array.isArray(schema.items))
            schema.items.forEach((item, index) => add(this.visit(item, `${path}/items/${index}`, depth + 1)));
        for (const keyword of SCHEMA_MAP_KEYWORDS) {
            const map = schema[keyword];
            if (isObject(map))
                for (const [name, child] of Object.entries(map))
                    add(this.visit(child, `${path}/${keyword}/${name}`, depth + 1));
        }
        // llama.cpp builds the schema once per type of a "type" list (common_chat_schema_builder::build_node)
        const types = Array.isArray(schema.type) ? Math.max(1, schema.type.length) : 1;
        count *= types;
        if (count > this.limits.schemaNodes)
            throw this.tooMany();
        return count;
    }

    private ref(ref: string, path: string, depth: number): number {
        const known = this.refCounts.get(ref);
        if (known === null)
            return 1;
        if (known !== undefined)
            return known;
        // a $ref llama.cpp cannot resolve (another document, a path that is not there) is its to refuse, in its words
        const target = ref.startsWith("#/") ? resolvePointer(this.root, ref) : undefined;
        if (target === undefined)
            return 1;
        this.refCounts.set(ref, null);
        const count = this.visit(target, ref, depth + 1);
        this.refCounts.set(ref, count);
        return count;
    }

    private contradictions(schema: Json, path: string): void {
        if ("enum" in schema) {
            if (!Array.isArray(schema.enum) || schema.enum.length === 0)
                throw new GrammarRefusal("grammar_unsatisfiable", `${shortPath(`${path}/enum`)} allows no value: an enum must list at least one`);
            this.enumValues += schema.enum.length;
            if (this.enumValues > this.limits.schemaEnumValues)
                throw new GrammarRefusal("grammar_limit", `the schema's enums list more than ${this.limits.schemaEnumValues} values together (at ${shortPath(`${path}/enum`)})`);
        }
        for (const keyword of ["anyOf", "oneOf", "allOf"] as const)
            if (Array.isArray(schema[keyword]) && schema[keyword].length === 0)
                throw new GrammarRefusal("grammar_unsatisfiable", `${shortPath(`${path}/${keyword}`)} lists no schema, so no value matches it`);
        if (Array.isArray(schema.type) && schema.type.length === 0)
            throw new GrammarRefusal("grammar_unsatisfiable", `${shortPath(`${path}/type`)} lists no type, so no value has one`);
        const types = new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
        if (types.has("integer") || types.has("number")) {
            const low = lowerBound(schema, types.has("integer"));
            const high = upperBound(schema, types.has("integer"));
            if (low != null && high != null && low.value > high.value)
                throw new GrammarRefusal("grammar_unsatisfiable", `${shortPath(`${path}/${high.keyword}`)}: no ${types.has("integer") ? "integer" : "number"} is ` +
                    `${low.keyword === "exclusiveMinimum" ? "above" : "at least"} ${String(schema[low.keyword])} and ${high.keyword === "exclusiveMaximum" ? "below" : "at most"} ${String(schema[high.keyword])}`);
        }
        pair(schema, path, "minLength", "maxLength", "characters");
        pair(schema, path, "minItems", "maxItems", "items");
        pair(schema, path, "minProperties", "maxProperties", "properties");
        if (Array.isArray(schema.required) && schema.additionalProperties === false) {
            const properties = isObject(schema.properties) ? schema.properties : {};
            const missing = schema.required.find((name) => typeof name === "string" && !Object.hasOwn(properties, name));
            if (missing != null)
                throw new GrammarRefusal("grammar_unsatisfiable", `${shortPath(`${path}/required`)} requires ${JSON.stringify(String(missing).slice(0, 64))}, ` +
                    "which is not among its properties while additionalProperties is false: no object can have it");
        }
    }
}

/** The least value an integer (rounded inwards, as llama.cpp's build_integer folds the bounds) or number may take. */
function lowerBound(schema: Json, integer: boolean): {value: number; keyword: string} | null {
    if (typeof schema.minimum === "number")
        return {value: integer ? Math.ceil(schema.minimum) : schema.minimum, keyword: "minimum"};
    if (typeof schema.exclusiveMinimum === "number")
        return {value: integer ? Math.floor(schema.exclusiveMinimum) + 1 : schema.exclusiveMinimum + Number.EPSILON * Math.max(1, Math.abs(schema.exclusiveMinimum)), keyword: "exclusiveMinimum"};
    return null;
}

function upperBound(schema: Json, integer: boolean): {value: number; keyword: string} | null {
    if (typeof schema.maximum === "number")
        return {value: integer ? Math.floor(schema.maximum) : schema.maximum, keyword: "maximum"};
    if (typeof schema.exclusiveMaximum === "number")
        return {value: integer ? Math.ceil(schema.exclusiveMaximum) - 1 : schema.exclusiveMaximum - Number.EPSILON * Math.max(1, Math.abs(schema.exclusiveMaximum)), keyword: "exclusiveMaximum"};
    return null;
}

function pair(schema: Json, path: string, least: string, most: string, what: string): void {
    const low = schema[least];
    const high = schema[most];
    if (typeof low === "number" && typeof high === "number" && low > high)
        throw new GrammarRefusal("grammar_unsatisfiable", `${shortPath(`${path}/${most}`)}: no value has at least ${low} and at most ${high} ${what} (${least} is over ${most})`);
}

/** A `#/a/b` pointer resolved as llama.cpp's builder resolves it (resolve_ref: split on `/`, array indices by number), or `undefined`. */
function resolvePointer(root: unknown, ref: string): unknown {
    let target = root;
    for (const part of ref.slice(2).split("/")) {
        if (isObject(target) && Object.hasOwn(target, part))
            target = target[part];
        else if (Array.isArray(target) && /^[0-9]+$/.test(part) && Number(part) < target.length)
            target = target[Number(part)];
        else
            return undefined;
    }
    return target;
}

/** A schema path short enough for a message: its start and end around an ellipsis. */
function shortPath(path: string): string {
    return path.length <= 120 ? path : `${path.slice(0, 60)}…${path.slice(-50)}`;
}
