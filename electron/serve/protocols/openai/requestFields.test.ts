/**
 * The request-field table from a client's side and an attacker's: every field OpenAI's `openai` package can send is in
 * it, nothing outside it passes, and every field refuses wrong values of every shape with a 400 naming it.
 */
import {readFileSync} from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {OpenAiError} from "../../common/OpenAiError.js";
import {parseChatCompletionRequest, parseCompletionRequest} from "./parseGenerationRequest.js";
import {MESSAGE_FIELDS, REQUEST_FIELDS, type Endpoint, type RequestFieldName} from "./requestFields.js";

const USER = [{role: "user", content: "x"}];

function parse(endpoint: Endpoint, extra: Record<string, unknown>) {
    return endpoint === "chat" ? parseChatCompletionRequest({messages: USER, ...extra}) : parseCompletionRequest({prompt: "x", ...extra});
}

function refusal(run: () => unknown): {status: number; type: string; param: string | null; message: string} {
    try {
        run();
    } catch (error) {
        if (error instanceof OpenAiError)
            return {status: error.status, type: error.type, param: error.param, message: error.message};
        throw error;
    }
    throw new Error("not refused");
}

/** The fields of one interface in the installed `openai` package's type declarations. */
function openAiFields(file: string, name: string): string[] {
    const require = createRequire(import.meta.url);
    const text = readFileSync(path.join(path.dirname(require.resolve("openai")), file), "utf8");
    const body = text.slice(text.indexOf(`export interface ${name} {`));
    return [...body.slice(0, body.indexOf("\n}")).matchAll(/^ {4}([a-z_]+)\??:/gm)].map((match) => match[1]!);
}

const rows = Object.entries(REQUEST_FIELDS) as [RequestFieldName, (typeof REQUEST_FIELDS)[RequestFieldName]][];
const endpointsOf = (field: RequestFieldName): readonly Endpoint[] => REQUEST_FIELDS[field].endpoints;

/** Values no field takes: wrong shapes, nested junk, NaN-ish and overflowing numbers (JSON's 1e999 parses to Infinity). */
const JUNK: unknown[] = [{$gt: 0}, [[{}]], Infinity, -Infinity, 1e308, -1, 0.5, "NaN", "1e3", "", "x".repeat(300_000), true, {nested: {deep: [1, {}]}}];

/** Junk that some field legitimately takes (strings for names, booleans for switches…), kept out of that field's run. */
function accepts(field: RequestFieldName, endpoint: Endpoint, value: unknown): boolean {
    try {
        parse(endpoint, {[field]: value});
        return true;
    } catch {
        return false;
    }
}

describe("the request-field table", () => {
    it("lists every field of OpenAI's chat and completions requests (from the installed openai package)", () => {
        const chat = openAiFields("resources/chat/completions/completions.d.ts", "ChatCompletionCreateParamsBase");
        const completion = openAiFields("resources/completions.d.ts", "CompletionCreateParamsBase");
        expect(chat.length).toBeGreaterThan(30);
        expect(completion.length).toBeGreaterThan(15);
        for (const field of chat)
            expect(endpointsOf(field as RequestFieldName) ?? [], field).toContain("chat");
        for (const field of completion)
            expect(endpointsOf(field as RequestFieldName) ?? [], field).toContain("completion");
    });

    it("refuses a field it does not know, or one for the other endpoint, naming it", () => {
        expect(refusal(() => parse("chat", {temprature: 0}))).toMatchObject({status: 400, type: "invalid_request_error", param: "temprature",
            message: expect.stringMatching(/^Unknown field `temprature`/)});
        expect(refusal(() => parse("chat", {__proto__x: 1}))).toMatchObject({param: "__proto__x"});
        expect(refusal(() => parse("chat", JSON.parse('{"__proto__": {"n": 2}}') as Record<string, unknown>))).toMatchObject({param: "__proto__"});
        expect(refusal(() => parse("chat", {constructor: 1}))).toMatchObject({param: "constructor"});
        expect(refusal(() => parse("completion", {response_format: {type: "json_object"}}))).toMatchObject({param: "response_format"});
        expect(refusal(() => parse("completion", {messages: USER}))).toMatchObject({param: "messages"});
        expect(refusal(() => parse("chat", {prompt: "x"}))).toMatchObject({param: "prompt"});
        expect(refusal(() => parse("chat", {best_of: 1}))).toMatchObject({param: "best_of"});
    });

    it("refuses junk of every shape in every field with a 400 whose param names that field", () => {
        for (const [field, row] of rows) {
            if (field === "messages" || field === "prompt")
                continue;
            for (const endpoint of row.endpoints)
                for (const value of JUNK) {
                    if (accepts(field, endpoint, value))
                        continue;
                    const refused = refusal(() => parse(endpoint, {[field]: value}));
                    expect(refused.status, `${field} = ${JSON.stringify(value)?.slice(0, 40)}`).toBe(400);
                    expect(refused.param, `${field} = ${JSON.stringify(value)?.slice(0, 40)}`).toMatch(new RegExp(`^${field}(\\.|\\[|$)`));
                    expect(refused.message.length).toBeLessThan(400);
                }
        }
        // the junk a field accepts is what its type allows: strings where OpenAI takes text, nothing numeric-looking
        expect(accepts("temperature", "chat", "0")).toBe(false);
        expect(accepts("max_tokens", "chat", "NaN")).toBe(false);
        expect(accepts("seed", "chat", 1e308)).toBe(false);
        expect(accepts("user", "chat", "x".repeat(300_000))).toBe(false);
    });

    it("accepts a refused field only with its 'off' value, and says why otherwise", () => {
        const refusedRows = rows.filter(([, row]) => row.treatment === "refused");
        expect(refusedRows.length).toBeGreaterThan(15);
        expect(parse("chat", {n: 1, tools: [], tool_choice: "none", logprobs: false, store: false, service_tier: "auto", cache_prompt: true})).toMatchObject({kind: "chat"});
        expect(parse("completion", {best_of: 1, echo: false, n_probs: 0, typical_p: 1})).toMatchObject({kind: "completion"});
        for (const [field, value] of [["n", 2], ["n_probs", 5], ["store", true], ["service_tier", "priority"],
            ["modalities", ["text", "audio"]], ["cache_prompt", false]] as const)
            expect(refusal(() => parse("chat", {[field]: value})), field).toMatchObject({param: field, message: expect.stringContaining("is not supported by this server")});
        expect(refusal(() => parse("completion", {suffix: "}"}))).toMatchObject({param: "suffix"});
        expect(refusal(() => parse("completion", {echo: true}))).toMatchObject({param: "echo"});
    });

    it("reads the sampling fields clients send, and refuses wrong values of the right length", () => {
        expect(parse("chat", {frequency_penalty: -2, presence_penalty: 2, repeat_penalty: 1.1, repeat_last_n: 0, min_p: 0.05, n_predict: 9}))
            .toMatchObject({frequencyPenalty: -2, presencePenalty: 2, repeatPenalty: 1.1, repeatLastN: 0, minP: 0.05, maxTokens: 9});
        expect(parse("completion", {logit_bias: {"0": -100, "17": 100, "4294967295": 1.5}}).logitBias).toEqual(new Map([[0, -100], [17, 100], [4294967295, 1.5]]));
        for (const value of [2.0001, -2.0001, "1", [1]])
            expect(refusal(() => parse("chat", {frequency_penalty: value}))).toMatchObject({param: "frequency_penalty"});
        // keys of the right length that name no token id the same way: padded, signed, fractional, spaced, hex, too big
        for (const key of ["01", "-1", "+1", "1.0", " 1", "1 ", "0x1", "1e2", "4294967296", "", "NaN"])
            expect(refusal(() => parse("chat", {logit_bias: {[key]: 1}})), key).toMatchObject({param: "logit_bias"});
        for (const value of [100.5, -101, "5", {}, Infinity])
            expect(refusal(() => parse("chat", {logit_bias: {"5": value}}))).toMatchObject({param: expect.stringMatching(/^logit_bias/)});
        expect(refusal(() => parse("chat", {logit_bias: Object.fromEntries(Array.from({length: 301}, (_, i) => [String(i), 1]))}))).toMatchObject({param: "logit_bias"});
        expect(refusal(() => parse("chat", {max_tokens: 5, max_completion_tokens: 6}))).toMatchObject({param: "max_completion_tokens", message: expect.stringMatching(/contradicts/)});
        expect(parse("chat", {max_tokens: 5, max_completion_tokens: 5}).maxTokens).toBe(5);
        expect(refusal(() => parse("chat", {stream_options: {include_usage: true, extra: 1}}))).toMatchObject({param: "stream_options.extra"});
        expect(refusal(() => parse("chat", {stream_options: {include_obfuscation: true}}))).toMatchObject({param: "stream_options.include_obfuscation"});
        expect(refusal(() => parse("chat", {stream_options: {include_usage: "true"}}))).toMatchObject({param: "stream_options.include_usage"});
        expect(refusal(() => parse("chat", {metadata: {a: 1}}))).toMatchObject({param: "metadata"});
        expect(refusal(() => parse("chat", {metadata: Object.fromEntries(Array.from({length: 17}, (_, i) => [`k${i}`, "v"]))}))).toMatchObject({param: "metadata"});
    });

    it("reads logprobs and top_logprobs as OpenAI bounds them, in either order, and refuses the rest naming the field", () => {
        expect(parse("chat", {logprobs: true, top_logprobs: 20}).logprobs).toEqual({top: 20});
        expect(parse("chat", {top_logprobs: 0, logprobs: true}).logprobs).toEqual({top: 0});
        expect(parse("chat", {logprobs: true}).logprobs).toEqual({top: 0});
        expect(parse("chat", {logprobs: false}).logprobs).toBeNull();
        expect(parse("chat", {}).logprobs).toBeNull();
        expect(parse("completion", {logprobs: 5}).logprobs).toEqual({top: 5});
        expect(parse("completion", {logprobs: 0}).logprobs).toEqual({top: 0});
        expect(parse("completion", {logprobs: false}).logprobs).toBeNull();
        // top_logprobs without logprobs: true (absent, false, or after it in the body)
        for (const extra of [{top_logprobs: 5}, {top_logprobs: 5, logprobs: false}, {top_logprobs: 0}, {top_logprobs: 5, logprobs: null}])
            expect(refusal(() => parse("chat", extra)), JSON.stringify(extra)).toMatchObject({status: 400, param: "top_logprobs", message: "`top_logprobs` needs `logprobs: true`."});
        for (const value of [21, -1, 2.5, "5", true, 1e308, [5], {n: 5}])
            expect(refusal(() => parse("chat", {logprobs: true, top_logprobs: value})), JSON.stringify(value)).toMatchObject({status: 400, param: "top_logprobs"});
        for (const value of [1, 0, "true", [true], {}])
            expect(refusal(() => parse("chat", {logprobs: value})), JSON.stringify(value)).toMatchObject({status: 400, param: "logprobs"});
        for (const value of [6, -1, 2.5, "5", true, 1e308])
            expect(refusal(() => parse("completion", {logprobs: value})), JSON.stringify(value)).toMatchObject({status: 400, param: "logprobs"});
        expect(refusal(() => parse("completion", {logprobs: 2, top_logprobs: 2}))).toMatchObject({param: "top_logprobs"});
        expect(refusal(() => parse("chat", {n_probs: 3}))).toMatchObject({param: "n_probs", message: expect.stringMatching(/send logprobs and top_logprobs/)});
    });

    it("reads response_format, json_schema and grammar, one of them at a time, and refuses malformed ones by their path", () => {
        const schema = {type: "object", properties: {ok: {type: "boolean"}}, required: ["ok"]};
        expect(parse("chat", {response_format: {type: "json_schema", json_schema: {name: "answer", schema, strict: true}}}).constraint)
            .toEqual({kind: "json", schema, source: "response_format"});
        expect(parse("chat", {response_format: {type: "json_object"}}).constraint).toEqual({kind: "json", schema: {type: "object"}, source: "response_format"});
        expect(parse("chat", {response_format: {type: "text"}}).constraint).toBeNull();
        expect(parse("completion", {json_schema: schema}).constraint).toEqual({kind: "json", schema, source: "json_schema"});
        expect(parse("completion", {grammar: "root ::= \"yes\""}).constraint).toEqual({kind: "grammar", gbnf: "root ::= \"yes\""});
        const cases: [unknown, string][] = [
            [{type: "json"}, "response_format.type"],
            [{type: "JSON_OBJECT"}, "response_format.type"],
            [{type: "json_schema"}, "response_format.json_schema"],
            [{type: "json_schema", json_schema: {schema}}, "response_format.json_schema.name"],
            [{type: "json_schema", json_schema: {name: "a b", schema}}, "response_format.json_schema.name"],
            [{type: "json_schema", json_schema: {name: "x".repeat(65), schema}}, "response_format.json_schema.name"],
            [{type: "json_schema", json_schema: {name: "a", schema: "{}"}}, "response_format.json_schema.schema"],
            [{type: "json_schema", json_schema: {name: "a", schema: [schema]}}, "response_format.json_schema.schema"],
            [{type: "json_schema", json_schema: {name: "a", schema, strict: "true"}}, "response_format.json_schema.strict"],
            [{type: "json_schema", json_schema: {name: "a", schema, extra: 1}}, "response_format.json_schema.extra"],
            [{type: "json_object", schema}, "response_format.schema"],
            [{type: "json_object", json_schema: {name: "a"}}, "response_format.json_schema"],
            [{type: "json_schema", json_schema: {name: "a", schema: {description: "x".repeat(300_000)}}}, "response_format.json_schema.schema"]
        ];
        for (const [format, param] of cases)
            expect(refusal(() => parse("chat", {response_format: format})), JSON.stringify(format).slice(0, 80)).toMatchObject({status: 400, param});
        expect(refusal(() => parse("chat", {response_format: {type: "json_object"}, grammar: "root ::= \"a\""}))).toMatchObject({param: "grammar", message: expect.stringMatching(/both constrain/)});
        expect(refusal(() => parse("chat", {grammar: "   "}))).toMatchObject({param: "grammar"});
    });

    it("lists every field of OpenAI's chat messages, refuses any other by its path, and takes a refused one only as null", () => {
        // the function message (role "function") is the deprecated functions API's, refused by its role
        const names = ["System", "Developer", "User", "Assistant", "Tool"].flatMap((role) =>
            openAiFields("resources/chat/completions/completions.d.ts", `ChatCompletion${role}MessageParam`));
        expect(names).toEqual(expect.arrayContaining(["role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call"]));
        for (const name of names)
            expect(Object.keys(MESSAGE_FIELDS), name).toContain(name);
        for (const key of ["reasoning", "Name", "__proto__x", "constructor"])
            expect(refusal(() => parseChatCompletionRequest({messages: [{role: "user", content: "x", [key]: "a"}]})), key)
                .toMatchObject({status: 400, param: `messages[0].${key}`, message: expect.stringContaining("is not a field of a chat message")});
        for (const key of ["refusal", "audio", "function_call"] as const) {
            expect(refusal(() => parseChatCompletionRequest({messages: [USER[0], {role: "assistant", content: "y", [key]: {id: "a"}}, USER[0]]})), key)
                .toMatchObject({param: `messages[1].${key}`, message: `messages[1].${key} is not supported by this server: ${MESSAGE_FIELDS[key].why}`});
            expect(parseChatCompletionRequest({messages: [USER[0], {role: "assistant", content: "y", [key]: null}, USER[0]]}).messages).toHaveLength(3);
        }
    });

    it("hands a message's name to the chat layer of a request with tool turns, refuses it elsewhere, and refuses names of the wrong shape", () => {
        const call = {id: "call_1", type: "function", function: {name: "get_time", arguments: "{}"}};
        const turns = [{role: "user", content: "time?", name: "alice"}, {role: "assistant", content: null, tool_calls: [call]},
            {role: "tool", content: "12:00", tool_call_id: "call_1", name: "get_time"}];
        const tools = [{type: "function", function: {name: "get_time"}}];
        expect(parseChatCompletionRequest({messages: turns, tools}).messages.map((message) => message.name)).toEqual(["alice", undefined, "get_time"]);
        expect(refusal(() => parseChatCompletionRequest({messages: [{role: "user", content: "x", name: "alice"}]})))
            .toMatchObject({param: "messages[0].name", message: expect.stringContaining("only in a request with tools or tool turns")});
        for (const name of ["", "a b", "x".repeat(65), 7, ["a"], {}])
            expect(refusal(() => parseChatCompletionRequest({messages: [turns[0], turns[1], {...turns[2], name}], tools})), JSON.stringify(name))
                .toMatchObject({status: 400, param: "messages[2].name"});
    });

    it("reads reasoning_format, reasoning_effort and chat_template_kwargs.enable_thinking, one thinking setting at a time, and refuses wrong values by path", () => {
        const chat = (extra: Record<string, unknown>) => parseChatCompletionRequest({messages: USER, ...extra});
        expect(chat({}).reasoning).toEqual({format: "auto"});
        for (const format of ["none", "auto", "deepseek", "deepseek-legacy"])
            expect(chat({reasoning_format: format}).reasoning.format).toBe(format);
        expect(chat({reasoning_effort: "none"}).reasoning).toEqual({format: "auto", thinking: {on: false, field: "reasoning_effort"}});
        expect(chat({reasoning_effort: "high"}).reasoning).toEqual({format: "auto", effort: {level: "high", field: "reasoning_effort"}});
        expect(chat({chat_template_kwargs: {enable_thinking: false}}).reasoning.thinking)
            .toEqual({on: false, field: "chat_template_kwargs.enable_thinking"});
        // two fields that agree are one setting; two that disagree, or an effort beside a switch, are refused by the later one
        expect(chat({reasoning_effort: "none", chat_template_kwargs: {enable_thinking: false}}).reasoning.thinking).toEqual({on: false, field: "reasoning_effort"});
        for (const [fields, param] of [[{reasoning_effort: "none", chat_template_kwargs: {enable_thinking: true}}, "chat_template_kwargs.enable_thinking"],
            [{chat_template_kwargs: {enable_thinking: true}, reasoning_effort: "low"}, "reasoning_effort"],
            [{reasoning_format: "DeepSeek"}, "reasoning_format"], [{reasoning_format: "auto "}, "reasoning_format"], [{reasoning_format: 1}, "reasoning_format"],
            [{reasoning_effort: "None"}, "reasoning_effort"], [{reasoning_effort: "lowx"}, "reasoning_effort"], [{reasoning_effort: ["low"]}, "reasoning_effort"],
            [{chat_template_kwargs: []}, "chat_template_kwargs"], [{chat_template_kwargs: {enable_thinking: 0}}, "chat_template_kwargs.enable_thinking"],
            [{chat_template_kwargs: {enable_thinking: "true"}}, "chat_template_kwargs.enable_thinking"],
            [{chat_template_kwargs: {tools_in_user_message: true}}, "chat_template_kwargs.tools_in_user_message"]] as const)
            expect(refusal(() => chat(fields)), JSON.stringify(fields)).toMatchObject({status: 400, param});
        // completions have no chat template
        for (const field of ["reasoning_format", "reasoning_effort", "chat_template_kwargs"])
            expect(refusal(() => parse("completion", {[field]: "none"})), field).toMatchObject({param: field});
    });

    it("takes an assistant's reasoning_content back as its thinking, and refuses it elsewhere or of the wrong shape", () => {
        const assistant = {role: "assistant", content: "4", reasoning_content: "2 and 2."};
        expect(parseChatCompletionRequest({messages: [USER[0], assistant, USER[0]]}).messages[1]).toEqual({role: "assistant", text: "4", reasoning: "2 and 2."});
        expect(parseChatCompletionRequest({messages: [USER[0], {...assistant, reasoning_content: null}, USER[0]]}).messages[1]).toEqual({role: "assistant", text: "4"});
        for (const [message, index] of [[{role: "user", content: "x", reasoning_content: "a"}, 0], [{...assistant, reasoning_content: 4}, 1],
            [{...assistant, reasoning_content: ["a"]}, 1], [{...assistant, reasoning_content: "x".repeat(300_000)}, 1]] as const)
            expect(refusal(() => parseChatCompletionRequest({messages: index === 0 ? [message] : [USER[0], message, USER[0]]})), JSON.stringify(message).slice(0, 80))
                .toMatchObject({status: 400, param: `messages[${index}].reasoning_content`});
    });
});
