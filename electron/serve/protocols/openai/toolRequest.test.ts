import {describe, expect, it} from "vitest";
import {OpenAiError} from "../../common/OpenAiError.js";
import {parseChatCompletionRequest} from "./parseGenerationRequest.js";

function refusal(body: unknown): {status: number; param: string | null; message: string} {
    try {
        parseChatCompletionRequest(body);
    } catch (error) {
        if (error instanceof OpenAiError)
            return {status: error.status, param: error.param, message: error.message};
        throw error;
    }
    throw new Error("not refused");
}

const user = [{role: "user", content: "Weather?"}];
const weather = {type: "function", function: {name: "get_weather", description: "d", parameters: {type: "object", properties: {city: {type: "string"}}}}};
const call = {id: "call_1", type: "function", function: {name: "get_weather", arguments: "{\"city\":\"Paris\"}"}};

describe("tools in an OpenAI chat request", () => {
    it("reads tools, tool_choice, parallel_tool_calls and the tool turns of a conversation", () => {
        expect(parseChatCompletionRequest({messages: user, tools: [weather]}).tools).toEqual({
            tools: [{name: "get_weather", description: "d", parameters: weather.function.parameters, parametersField: "tools[0].function.parameters"}],
            choice: "auto", parallel: true
        });
        expect(parseChatCompletionRequest({messages: user, tools: [weather], tool_choice: {type: "function", function: {name: "get_weather"}},
            parallel_tool_calls: false}).tools).toMatchObject({choice: {name: "get_weather"}, parallel: false});
        // no parameters: a function of no arguments
        expect(parseChatCompletionRequest({messages: user, tools: [{type: "function", function: {name: "now"}}]}).tools!.tools[0]!.parameters)
            .toEqual({type: "object", properties: {}});
        const turns = parseChatCompletionRequest({messages: [...user, {role: "assistant", content: null, tool_calls: [call]},
            {role: "tool", tool_call_id: "call_1", content: "Sunny"}], tools: [weather]});
        expect(turns.messages.slice(1)).toEqual([{role: "assistant", text: "", toolCalls: [{id: "call_1", name: "get_weather", arguments: call.function.arguments}]},
            {role: "tool", text: "Sunny", toolCallId: "call_1"}]);
        // tool turns without tools still go through the template (no tool can be called)
        expect(parseChatCompletionRequest({messages: [...user, {role: "assistant", content: null, tool_calls: [call]},
            {role: "tool", tool_call_id: "call_1", content: "Sunny"}]}).tools).toEqual({tools: [], choice: "none", parallel: true});
        expect(parseChatCompletionRequest({messages: user, tools: []}).tools).toBeNull();
        // streamed: the calls come as tool_calls deltas (ToolCallStream.ts)
        expect(parseChatCompletionRequest({messages: user, tools: [weather], stream: true})).toMatchObject({stream: true, tools: {choice: "auto"}});
    });

    it("refuses every wrong shape of tools with a 400 naming the field", () => {
        const cases: [unknown, string][] = [
            ["get_weather", "tools"], [{}, "tools"], [[null], "tools[0]"], [["get_weather"], "tools[0]"],
            [[{type: "code_interpreter"}], "tools[0].type"], [[{type: "function"}], "tools[0].function"],
            [[{type: "function", function: []}], "tools[0].function"], [[{type: "function", function: {}}], "tools[0].function.name"],
            [[{type: "function", function: {name: ""}}], "tools[0].function.name"],
            [[{type: "function", function: {name: "a b"}}], "tools[0].function.name"],
            [[{type: "function", function: {name: "x".repeat(65)}}], "tools[0].function.name"],
            [[{type: "function", function: {name: 7}}], "tools[0].function.name"],
            [[weather, weather], "tools[1].function.name"],
            [[{type: "function", function: {name: "f", parameters: "object"}}], "tools[0].function.parameters"],
            [[{type: "function", function: {name: "f", parameters: []}}], "tools[0].function.parameters"],
            [[{type: "function", function: {name: "f", parameters: {type: "string"}}}], "tools[0].function.parameters.type"],
            [[{type: "function", function: {name: "f", description: 5}}], "tools[0].function.description"],
            [[{type: "function", function: {name: "f", strict: "yes"}}], "tools[0].function.strict"],
            [[{type: "function", function: {name: "f", extra: 1}}], "tools[0].function.extra"],
            [[{type: "function", function: {name: "f"}, extra: 1}], "tools[0].extra"],
            [Array.from({length: 129}, (_, i) => ({type: "function", function: {name: `f${i}`}})), "tools"]
        ];
        for (const [tools, param] of cases)
            expect(refusal({messages: user, tools}), JSON.stringify(tools).slice(0, 80)).toMatchObject({status: 400, param});
    });

    it("refuses a tool_choice that names no tool, asks for a call without tools, or has a wrong shape", () => {
        expect(refusal({messages: user, tools: [weather], tool_choice: {type: "function", function: {name: "get_time"}}}))
            .toMatchObject({param: "tool_choice.function.name", message: expect.stringContaining("get_time")});
        expect(refusal({messages: user, tool_choice: "required"})).toMatchObject({param: "tool_choice"});
        for (const [choice, param] of [["any", "tool_choice"], [5, "tool_choice"], [{type: "tool"}, "tool_choice.type"],
            [{type: "function", function: "get_weather"}, "tool_choice.function"], [{type: "function", function: {name: "a b"}}, "tool_choice.function.name"],
            [{type: "function", function: {name: "get_weather"}, x: 1}, "tool_choice.x"]] as const)
            expect(refusal({messages: user, tools: [weather], tool_choice: choice}), JSON.stringify(choice)).toMatchObject({param});
        expect(refusal({messages: user, tools: [weather], parallel_tool_calls: "true"})).toMatchObject({param: "parallel_tool_calls"});
    });

    it("refuses wrong tool turns and what cannot be combined with tools, by name", () => {
        const withCall = (toolCall: unknown) => ({messages: [...user, {role: "assistant", content: null, tool_calls: [toolCall]},
            {role: "tool", tool_call_id: "call_1", content: "x"}], tools: [weather]});
        expect(refusal(withCall({...call, id: ""}))).toMatchObject({param: "messages[1].tool_calls[0].id"});
        expect(refusal(withCall({...call, type: "custom"}))).toMatchObject({param: "messages[1].tool_calls[0].type"});
        expect(refusal(withCall({...call, function: {name: "get_weather", arguments: {city: "Paris"}}}))).toMatchObject({param: "messages[1].tool_calls[0].function.arguments"});
        // arguments of the right type that are no JSON object
        for (const args of ["{", "[1]", "\"Paris\"", "null"])
            expect(refusal(withCall({...call, function: {name: "get_weather", arguments: args}})), args).toMatchObject({param: "messages[1].tool_calls[0].function.arguments"});
        expect(refusal({messages: [...user, {role: "assistant", content: null, tool_calls: "call"}], tools: [weather]})).toMatchObject({param: "messages[1].tool_calls"});
        expect(refusal({messages: [...user, {role: "assistant", content: null, tool_calls: []}], tools: [weather]})).toMatchObject({param: "messages[1].tool_calls"});
        expect(refusal({messages: [...user, {role: "tool", content: "x"}], tools: [weather]})).toMatchObject({param: "messages[1].tool_call_id"});
        expect(refusal({messages: [{role: "user", content: "x", tool_calls: [call]}]})).toMatchObject({param: "messages[0].tool_calls"});
        expect(refusal({messages: [{role: "user", content: "x", tool_call_id: "call_1"}]})).toMatchObject({param: "messages[0].tool_call_id"});
        expect(refusal({messages: [...user, {role: "assistant", content: "Let me"}], tools: [weather]})).toMatchObject({param: "messages"});
        expect(refusal({messages: user, tools: [weather], logprobs: true})).toMatchObject({param: "logprobs"});
        expect(refusal({messages: user, tools: [weather], response_format: {type: "json_object"}})).toMatchObject({param: "response_format"});
        expect(refusal({messages: user, tools: [weather], grammar: "root ::= \"x\""})).toMatchObject({param: "grammar"});
    });
});
