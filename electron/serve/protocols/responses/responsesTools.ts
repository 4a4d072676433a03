/**
 * Function tools in an OpenAI Responses request, read from the client's side of the trust boundary and mapped onto
 * the server's one tool path (toolRequest.ts, toolCallPrompt.ts): `tools` (`{type: "function", name, description,
 * parameters, strict}`), `tool_choice`, `parallel_tool_calls`, and the input items of tool turns: `function_call`
 * `{call_id, name, arguments}` and `function_call_output` `{call_id, output}`. The shapes are the `openai` npm
 * package's (resources/responses/responses.d.ts: FunctionTool, ToolChoiceOptions, ToolChoiceFunction,
 * ResponseFunctionToolCall, ResponseInputItem.FunctionCallOutput). Hosted tools (web_search, file_search,
 * code_interpreter, mcp…) run on OpenAI's side and are refused by name.
 */
import {TEXT_LIMITS} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {type ToolCall, type ToolDefinition, type ToolUse} from "../../common/GenerationRequest.js";
import {checkStrict, functionName, isPlainObject, parametersOf, readToolList, toolCallId, toolUseOf, type ToolShape} from "../openai/toolRequest.js";

const FUNCTION_KEYS = new Set(["type", "name", "description", "parameters", "strict"]);

function bad(field: string, message: string): OpenAiError {
    return OpenAiError.badRequest(message, field);
}

/** A Responses function tool: `{type: "function", name, description?, parameters?, strict?}`. */
const RESPONSES_TOOL: ToolShape = {
    list: "a list of {\"type\": \"function\", \"name\", \"parameters\"} objects",
    item: "{\"type\": \"function\", \"name\", \"parameters\"}",
    open: (tool, at) => {
        if (tool.type !== "function")
            throw bad(`${at}.type`, `\`${at}.type\` is ${JSON.stringify(String(tool.type).slice(0, 40))}: hosted tools run on OpenAI's side; this server calls ` +
                "function tools only.");
        for (const key of Object.keys(tool))
            if (!FUNCTION_KEYS.has(key))
                throw bad(`${at}.${key.slice(0, 40)}`, `\`${at}.${key.slice(0, 40)}\` is not a field of a function tool (it takes ${[...FUNCTION_KEYS].join(", ")}).`);
        return {fields: tool, at};
    },
    close: (tool, _fields, at) => {
        checkStrict(tool, at);
        return parametersOf(tool.parameters, `${at}.parameters`);
    },
    parametersKey: "parameters"
};

/** `tools`: function tools with distinct names; `strict` or not, the arguments are always held to the schema by grammar. */
export function readResponsesTools(value: unknown): ToolDefinition[] {
    return readToolList(value, "tools", RESPONSES_TOOL);
}

/** `tool_choice`: "none", "auto", "required" or `{type: "function", name}`. */
function readResponsesToolChoice(value: unknown): ToolUse["choice"] {
    if (value === "none" || value === "auto" || value === "required")
        return value;
    if (!isPlainObject(value))
        throw bad("tool_choice", "`tool_choice` must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": \"…\"}.");
    if (value.type !== "function")
        throw bad("tool_choice.type", `\`tool_choice.type\` is ${JSON.stringify(String(value.type).slice(0, 40))}: this server can force function tools only ("function").`);
    const extra = Object.keys(value).find((key) => key !== "type" && key !== "name");
    if (extra != null)
        throw bad(`tool_choice.${extra.slice(0, 40)}`, `\`tool_choice.${extra.slice(0, 40)}\` is not a field of tool_choice (it takes type and name).`);
    return {name: functionName(value.name, "tool_choice.name")};
}

/** The request's tool use, every field read; `null` when it neither sends tools nor has tool turns. */
export function responsesToolUse(object: Record<string, unknown>, hasToolTurns: boolean): ToolUse | null {
    const tools = object.tools == null ? undefined : readResponsesTools(object.tools);
    const choice = object.tool_choice == null ? undefined : readResponsesToolChoice(object.tool_choice);
    const parallel = object.parallel_tool_calls;
    if (parallel != null && typeof parallel !== "boolean")
        throw bad("parallel_tool_calls", "`parallel_tool_calls` must be true or false.");
    if (typeof choice === "object" && !(tools ?? []).some((tool) => tool.name === choice.name))
        throw bad("tool_choice.name", `\`tool_choice.name\` names the function ${JSON.stringify(choice.name)}, which is not one of \`tools\`.`);
    return toolUseOf(tools, choice, parallel ?? undefined, hasToolTurns);
}

/** A `function_call` input item `{type, call_id, name, arguments, id?, status?}` as a tool call. */
export function readFunctionCallItem(item: Record<string, unknown>, at: string): ToolCall {
    const {type: _type, call_id: callId, name, arguments: args, id, status, ...rest} = item;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw bad(`${at}.${extra.slice(0, 40)}`, `\`${at}.${extra.slice(0, 40)}\` is not a field of a function_call item (it takes call_id, name, arguments, id and status).`);
    checkItemIdAndStatus(id, status, at);
    const callIdRead = toolCallId(callId, `${at}.call_id`);
    const fn = functionName(name, `${at}.name`);
    let parsed: unknown;
    try {
        parsed = typeof args === "string" && args.length <= TEXT_LIMITS.message ? JSON.parse(args) : undefined;
    } catch {
        parsed = undefined;
    }
    // the chat template renders the arguments as an object (llama.cpp's common_chat_msgs_parse_oaicompat parses them)
    if (!isPlainObject(parsed))
        throw bad(`${at}.arguments`, `\`${at}.arguments\` must be a JSON object written as a string.`);
    return {id: callIdRead, name: fn, arguments: args as string};
}

/** A `function_call_output` input item `{type, call_id, output, id?, status?}`: the call it answers and its output's text. */
export function readFunctionCallOutputItem(item: Record<string, unknown>, at: string): {callId: string; text: string} {
    const {type: _type, call_id: callId, output, id, status, ...rest} = item;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw bad(`${at}.${extra.slice(0, 40)}`, `\`${at}.${extra.slice(0, 40)}\` is not a field of a function_call_output item (it takes call_id, output, id and status).`);
    checkItemIdAndStatus(id, status, at);
    let text: string;
    if (typeof output === "string")
        text = output;
    else if (Array.isArray(output) && output.length > 0)
        text = output.map((part: unknown, index) => {
            if (!isPlainObject(part) || part.type !== "input_text" || typeof part.text !== "string" || Object.keys(part).length !== 2)
                throw bad(`${at}.output[${index}]`, `\`${at}.output[${index}]\` must be {"type": "input_text", "text": "…"}: this model reads text only.`);
            return part.text;
        }).join("");
    else
        throw bad(`${at}.output`, `\`${at}.output\` must be a string or a non-empty list of input_text parts.`);
    if (text.length > TEXT_LIMITS.message)
        throw bad(`${at}.output`, `\`${at}.output\` is longer than ${TEXT_LIMITS.message} characters.`);
    return {callId: toolCallId(callId, `${at}.call_id`), text};
}

function checkItemIdAndStatus(id: unknown, status: unknown, at: string): void {
    if (id != null && (typeof id !== "string" || id.length > TEXT_LIMITS.toolCallId))
        throw bad(`${at}.id`, `\`${at}.id\` must be a string of at most ${TEXT_LIMITS.toolCallId} characters.`);
    if (status != null && status !== "in_progress" && status !== "completed" && status !== "incomplete")
        throw bad(`${at}.status`, `\`${at}.status\` must be "in_progress", "completed" or "incomplete".`);
}
