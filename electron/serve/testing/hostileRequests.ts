/**
 * The requests of the attacker-side sweep, each as it was sent, with the refusal it must now get:
 * grammars and JSON schemas that crashed or hung the server, JSON nested too deep to read, and contradictions that
 * left a reply with no way forward. Shared by the server's own test (hostileStructures.cpu.test.ts) and the app's
 * server through the engine child (electron/host/server/appServerHostile.cpu.test.ts).
 */

export type HostileRequest = {
    name: string;
    path: string;
    /** The body as sent (text: some are nested deeper than JSON.stringify can write). */
    body: string;
    /** The refusal: its status, `code` and `param` (the field named). */
    expected: {status: number; code: string; param: string | RegExp};
};

const USER = [{role: "user", content: "Hello"}];

/** `{"type":"object","properties":{"a": … }}` nested `levels` deep, written as text. */
export function nestedSchemaText(levels: number): string {
    return "{\"type\":\"object\",\"properties\":{\"a\":".repeat(levels) + "{\"type\":\"object\"}" + "}}".repeat(levels);
}

/** `$defs` d0…d(n−1), each an anyOf of two `$ref`s to the next: 2^n expansions of one small schema. */
export function fanOutSchema(levels: number): Record<string, unknown> {
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < levels; i++)
        defs[`d${i}`] = {anyOf: [{$ref: `#/$defs/d${i + 1}`}, {$ref: `#/$defs/d${i + 1}`}]};
    defs[`d${levels}`] = {type: "boolean"};
    return {$ref: "#/$defs/d0", $defs: defs};
}

const chat = (extra: Record<string, unknown>, stream = false) => JSON.stringify({messages: USER, max_tokens: 8, temperature: 0, stream, ...extra});
const jsonSchema = (schema: unknown) => ({response_format: {type: "json_schema", json_schema: {name: "answer", schema}}});

/** Grammars and schemas that crashed the server (SIGSEGV, "Unexpected empty grammar stack") or never finished. */
export const CRASHING_CONSTRAINTS: readonly HostileRequest[] = [
    {name: "a grammar of 100,000 nested parentheses on /v1/completions", path: "/v1/completions",
        body: JSON.stringify({prompt: "x", max_tokens: 4, grammar: `root ::= ${"(".repeat(100_000)}"a"${")".repeat(100_000)}`}),
        expected: {status: 400, code: "grammar_limit", param: "grammar"}},
    {name: "a grammar of 30,000 nested parentheses (within the length limit)", path: "/v1/completions",
        body: JSON.stringify({prompt: "x", max_tokens: 4, grammar: `root ::= ${"(".repeat(30_000)}"a"${")".repeat(30_000)}`}),
        expected: {status: 400, code: "grammar_limit", param: "grammar"}},
    {name: "json_schema minimum 5, maximum 3 (chat, streamed)", path: "/v1/chat/completions",
        body: chat(jsonSchema({type: "object", properties: {n: {type: "integer", minimum: 5, maximum: 3}}, required: ["n"]}), true),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "response_format"}},
    {name: "an integer range 5..3 (chat)", path: "/v1/chat/completions", body: chat(jsonSchema({type: "integer", minimum: 5, maximum: 3})),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "response_format"}},
    {name: "the grammar [b-a] on /v1/completions", path: "/v1/completions", body: JSON.stringify({prompt: "x", max_tokens: 4, grammar: "root ::= [b-a]"}),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "grammar"}},
    {name: "the grammar [b-a] on chat, streamed", path: "/v1/chat/completions", body: chat({grammar: "root ::= \"ok\" [b-a]"}, true),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "grammar"}},
    {name: "a repetition {5,3} in a grammar", path: "/v1/completions", body: JSON.stringify({prompt: "x", max_tokens: 4, grammar: "root ::= \"a\"{5,3}"}),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "grammar"}},
    {name: "minLength over maxLength (llama.cpp's json_schema field)", path: "/v1/chat/completions",
        body: chat({json_schema: {type: "string", minLength: 5, maxLength: 3}}), expected: {status: 400, code: "grammar_unsatisfiable", param: "json_schema"}},
    {name: "minItems over maxItems (Responses text.format)", path: "/v1/responses",
        body: JSON.stringify({input: "Hello", max_output_tokens: 8, text: {format: {type: "json_schema", name: "x", schema: {type: "array", minItems: 5, maxItems: 3}}}}),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "text.format"}},
    {name: "an integer range 5..3 (Responses text.format, streamed)", path: "/v1/responses",
        body: JSON.stringify({input: "Hello", max_output_tokens: 8, stream: true,
            text: {format: {type: "json_schema", name: "x", schema: {type: "object", properties: {n: {type: "integer", minimum: 5, maximum: 3}}}}}}),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "text.format"}},
    {name: "an empty enum", path: "/v1/chat/completions", body: chat(jsonSchema({enum: []})),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "response_format"}},
    {name: "an impossible pattern", path: "/v1/chat/completions", body: chat(jsonSchema({type: "string", pattern: "^[b-a]$"})),
        expected: {status: 400, code: "grammar_unsatisfiable", param: "response_format"}},
    {name: "a schema whose $refs fan out 2^40 times", path: "/v1/chat/completions", body: chat(jsonSchema(fanOutSchema(40))),
        expected: {status: 400, code: "grammar_limit", param: "response_format"}},
    {name: "a schema whose $refs fan out 2^30 times (within the depth limit)", path: "/v1/chat/completions", body: chat(jsonSchema(fanOutSchema(30))),
        expected: {status: 400, code: "grammar_limit", param: "response_format"}},
    {name: "a GBNF grammar whose rules fan out 2^40 times", path: "/v1/completions",
        body: JSON.stringify({prompt: "x", max_tokens: 4, grammar: ["root ::= d0", ...Array.from({length: 40}, (_, i) => `d${i} ::= d${i + 1} | d${i + 1}`), "d40 ::= \"x\""].join("\n")}),
        expected: {status: 400, code: "grammar_limit", param: "grammar"}},
    {name: "an enum of 30,000 values", path: "/v1/chat/completions", body: chat(jsonSchema({enum: Array.from({length: 30_000}, (_, i) => i)})),
        expected: {status: 400, code: "grammar_limit", param: "response_format"}}
];

/** JSON too deep to read: answered 500 "could not answer this request" before. */
export const DEEP_JSON: readonly HostileRequest[] = [
    {name: "tool parameters nested 5,000 deep", path: "/v1/chat/completions",
        body: `{"messages":[{"role":"user","content":"Hello"}],"max_tokens":8,"tools":[{"type":"function","function":{"name":"f","parameters":${nestedSchemaText(5000)}}}]}`,
        expected: {status: 400, code: "json_too_deep", param: /^tools\[0\]\.function\.parameters\.properties\.a/}},
    {name: "text.format nested 25,000 deep", path: "/v1/responses",
        body: `{"input":"Hello","max_output_tokens":8,"text":{"format":{"type":"json_schema","name":"x","schema":${nestedSchemaText(25_000)}}}}`,
        expected: {status: 400, code: "json_too_deep", param: /^text\.format\.schema\.properties\.a/}},
    {name: "input_schema nested 25,000 deep", path: "/v1/messages",
        body: `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"Hello"}],"tools":[{"name":"f","input_schema":${nestedSchemaText(25_000)}}]}`,
        expected: {status: 400, code: "json_too_deep", param: /^tools\[0\]\.input_schema\.properties\.a/}}
];

const WEATHER_TOOL = {name: "get_weather", description: "The weather of a city", parameters: {type: "object", properties: {city: {type: "string"}}, required: ["city"]}};

/** Tools sent to a model whose template cannot call tools, in each dialect: 200 with free text before. */
export const TOOLS_WITHOUT_SYNTAX: readonly HostileRequest[] = [
    ...(["auto", "required", {type: "function", function: {name: "get_weather"}}] as const).flatMap((choice) => [false, true].map((stream): HostileRequest => ({
        name: `chat, tool_choice ${JSON.stringify(choice)}${stream ? ", streamed" : ""}`, path: "/v1/chat/completions",
        body: chat({tools: [{type: "function", function: WEATHER_TOOL}], tool_choice: choice}, stream),
        expected: {status: 400, code: "tools_unsupported", param: "tools"}
    }))),
    {name: "messages, tool_choice any", path: "/v1/messages", body: JSON.stringify({model: "m", max_tokens: 8, messages: USER,
        tools: [{name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters}], tool_choice: {type: "any"}}),
    expected: {status: 400, code: "tools_unsupported", param: "tools"}},
    {name: "responses, tool_choice required, streamed", path: "/v1/responses", body: JSON.stringify({input: "Hello", max_output_tokens: 8, stream: true,
        tools: [{type: "function", ...WEATHER_TOOL}], tool_choice: "required"}),
    expected: {status: 400, code: "tools_unsupported", param: "tools"}}
];

/** `count` tools whose parameters are about `bytes` of JSON schema each. */
export function bigTools(count: number, bytes: number): {type: "function"; function: {name: string; description: string; parameters: Record<string, unknown>}}[] {
    return Array.from({length: count}, (_, tool) => {
        const properties: Record<string, unknown> = {};
        for (let field = 0, written = 0; written < bytes; field++) {
            const name = `field_${tool}_${field}`;
            properties[name] = {type: "string", description: "a field of a very large tool"};
            written += JSON.stringify({[name]: properties[name]}).length;
        }
        return {type: "function", function: {name: `tool_${tool}`, description: "A tool with a large schema", parameters: {type: "object", properties}}};
    });
}
