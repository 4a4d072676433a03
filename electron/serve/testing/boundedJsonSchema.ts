/**
 * A JSON schema whose every value is bounded (enums, booleans, a bounded integer, a short string, a short array), so the
 * grammar made of it forces the JSON to end within a few dozen tokens whatever a random-weight test model prefers.
 */
export const BOUNDED_JSON_SCHEMA = {
    type: "object",
    properties: {
        mood: {enum: ["calm", "stormy"]},
        ok: {type: "boolean"},
        count: {type: "integer", minimum: 0, maximum: 9},
        name: {type: "string", maxLength: 3},
        tags: {type: "array", items: {enum: ["a", "b"]}, maxItems: 2}
    },
    required: ["mood", "ok", "count", "name", "tags"],
    additionalProperties: false
} as const;
