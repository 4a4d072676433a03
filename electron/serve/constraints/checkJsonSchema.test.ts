/**
 * JSON schemas from the attacker's side (checkJsonSchema.ts): contradictions of every kind refused by the path in the
 * schema, each limit met exactly and refused one past, `$ref`s that fan out or loop, and shapes that are not schemas.
 */
import {describe, expect, it} from "vitest";
import {STRUCTURE_LIMITS} from "../../contract/limits.js";
import {fanOutSchema} from "../testing/hostileRequests.js";
import {checkJsonSchema} from "./checkJsonSchema.js";
import {GrammarRefusal} from "./GrammarRefusal.js";

function refusal(schema: unknown): GrammarRefusal {
    try {
        checkJsonSchema(schema);
    } catch (error) {
        if (error instanceof GrammarRefusal)
            return error;
        throw error;
    }
    throw new Error(`not refused: ${JSON.stringify(schema).slice(0, 100)}`);
}

const nested = (levels: number): Record<string, unknown> => {
    let schema: Record<string, unknown> = {type: "string"};
    for (let i = 0; i < levels; i++)
        schema = {type: "object", properties: {a: schema}};
    return schema;
};

describe("contradictions, refused by the path in the schema", () => {
    it.each([
        ["an integer range 5..3", {type: "integer", minimum: 5, maximum: 3}, "#/maximum", /no integer is at least 5 and at most 3/],
        ["an integer range with no integer in it (3.2..3.8)", {type: "integer", minimum: 3.2, maximum: 3.8}, "#/maximum", /no integer/],
        ["exclusive bounds 3 < n < 4 for an integer", {type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 4}, "#/exclusiveMaximum", /no integer is above 3 and below 4/],
        ["a number range 5..3", {type: "number", minimum: 5, maximum: 3}, "#/maximum", /no number/],
        ["a nested integer range", {type: "object", properties: {age: {type: "integer", minimum: 200, maximum: 0}}}, "#/properties/age/maximum", /no integer/],
        ["minLength over maxLength", {type: "string", minLength: 5, maxLength: 3}, "#/maxLength", /minLength is over maxLength/],
        ["minItems over maxItems", {type: "array", items: {type: "string"}, minItems: 5, maxItems: 3}, "#/maxItems", /minItems is over maxItems/],
        ["minProperties over maxProperties", {type: "object", minProperties: 2, maxProperties: 1}, "#/maxProperties", /minProperties is over maxProperties/],
        ["an empty enum", {enum: []}, "#/enum", /allows no value/],
        ["an enum that is not a list", {enum: "a"}, "#/enum", /allows no value/],
        ["an empty anyOf", {anyOf: []}, "#/anyOf", /no schema/],
        ["an empty type list", {type: []}, "#/type", /lists no type/],
        ["a required property an object cannot have", {type: "object", properties: {a: {type: "string"}}, required: ["b"], additionalProperties: false},
            "#/required", /requires "b", which is not among its properties/],
        ["a contradiction behind a $ref", {$ref: "#/$defs/n", $defs: {n: {type: "integer", minimum: 1, maximum: 0}}}, "#/$defs/n/maximum", /no integer/]
    ])("%s", (_name, schema, path, message) => {
        const refused = refusal(schema);
        expect(refused.code).toBe("grammar_unsatisfiable");
        expect(refused.message.startsWith(path)).toBe(true);
        expect(refused.message).toMatch(message);
    });

    it("accepts bounds that leave a value, the same numbers the other way round, and one-value ranges", () => {
        for (const schema of [{type: "integer", minimum: 3, maximum: 5}, {type: "integer", minimum: 3, maximum: 3}, {type: "string", minLength: 3, maxLength: 3},
            {type: "array", minItems: 0, maxItems: 0}, {type: "number", minimum: 0.5, maximum: 0.5}, {type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 5},
            {type: "object", properties: {a: {}}, required: ["a"], additionalProperties: false}, {type: "object", required: ["b"]}, {enum: [null]}])
            expect(() => checkJsonSchema(schema), JSON.stringify(schema)).not.toThrow();
    });
});

describe("limits, met and one past", () => {
    it("nesting: 32 subschemas deep is checked, 33 refused", () => {
        expect(() => checkJsonSchema(nested(STRUCTURE_LIMITS.schemaDepth))).not.toThrow();
        expect(refusal(nested(STRUCTURE_LIMITS.schemaDepth + 1))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/more than 32 deep/)});
    });

    it("$refs that fan out (2^40, and 2^13 within the depth) are refused by their expansion; a recursive $ref (a tree) is fine", () => {
        expect(refusal(fanOutSchema(40))).toMatchObject({code: "grammar_limit"});
        expect(refusal(fanOutSchema(13))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/more than 10000 subschemas once each `\$ref` is counted/)});
        expect(() => checkJsonSchema(fanOutSchema(12))).not.toThrow();
        expect(() => checkJsonSchema({$ref: "#/$defs/node", $defs: {node: {type: "object", properties: {value: {type: "integer"},
            children: {type: "array", items: {$ref: "#/$defs/node"}}}}}})).not.toThrow();
    });

    it("a \"type\" list counts the schema once per type, as llama.cpp builds it", () => {
        const props = (count: number) => Object.fromEntries(Array.from({length: count}, (_, i) => [`p${i}`, {type: "string"}]));
        expect(() => checkJsonSchema({type: "object", properties: props(4000)})).not.toThrow();
        expect(refusal({type: ["object", "array", "null"], properties: props(4000)})).toMatchObject({code: "grammar_limit"});
    });

    it("enums: 1024 values in all pass, 1025 are refused", () => {
        const values = (count: number) => Array.from({length: count}, (_, i) => `v${i}`);
        expect(() => checkJsonSchema({type: "object", properties: {a: {enum: values(1000)}, b: {enum: values(24)}}})).not.toThrow();
        expect(refusal({type: "object", properties: {a: {enum: values(1000)}, b: {enum: values(25)}}}))
            .toMatchObject({code: "grammar_limit", message: expect.stringMatching(/enums list more than 1024 values together \(at #\/properties\/b\/enum\)/)});
    });
});

describe("shapes that are not schemas", () => {
    it.each([["an array", []], ["a string", "object"], ["a number", 1], ["null", null]])("refuses %s where a subschema belongs, naming where", (_name, value) => {
        expect(refusal({type: "object", properties: {a: value}})).toMatchObject({code: "grammar_syntax", message: "#/properties/a must be a schema (an object)"});
    });

    it("takes true and false as subschemas, keys that look like prototypes as names, and leaves $refs llama.cpp cannot resolve to its own message", () => {
        for (const schema of [{type: "object", properties: {a: true, b: false}}, JSON.parse("{\"type\":\"object\",\"properties\":{\"__proto__\":{\"type\":\"string\"},\"constructor\":{}}}"),
            {$ref: "#/$defs/missing"}, {$ref: "https://example.com/schema.json"}, {$ref: "#/properties/0/x"}])
            expect(() => checkJsonSchema(schema), JSON.stringify(schema)).not.toThrow();
    });
});
