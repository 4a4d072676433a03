/**
 * Tool calling in an OpenAI chat-completions request, read from the client's side of the trust boundary: `tools`,
 * `tool_choice`, `parallel_tool_calls`, and the tool turns of `messages` (an assistant message's `tool_calls`, a
 * `role: "tool"` result). Every shape that is not OpenAI's gets a 400 naming the field; nothing is dropped.
 * The shapes are the `openai` npm package's (resources/chat/completions/completions.d.ts: ChatCompletionTool,
 * ChatCompletionToolChoiceOption, ChatCompletionMessageToolCall, ChatCompletionToolMessageParam).
 */
import {checkLimit, TEXT_LIMITS} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import type {ToolCall, ToolChoice, ToolDefinition, ToolUse} from "../../common/GenerationRequest.js";

/** OpenAI's rule for a function name (ChatCompletionTool.function.name). */
const NAME_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${TEXT_LIMITS.toolName}}$`);
const TOOL_KEYS = new Set(["type", "function"]);
const FUNCTION_KEYS = new Set(["name", "description", "parameters", "strict"]);

function bad(field: string, message: string): OpenAiError {
    return OpenAiError.badRequest(message, field);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value != null && !Array.isArray(value);
}

/** A function's name, by OpenAI's rule (Anthropic's tool names follow the same one). */
export function functionName(value: unknown, field: string): string {
    if (typeof value !== "string" || !NAME_PATTERN.test(value))
        throw bad(field, `\`${field}\` must be 1 to ${TEXT_LIMITS.toolName} letters, digits, underscores or dashes.`);
    return value;
}

/**
 * How one dialect writes a tool in its `tools` list, for {@link readToolList}: what an item looks like (for the
 * messages), the dialect's own checks before the name is read (returning the object that holds `name` and
 * `description`, and its path), and those after it (returning the function's parameters).
 */
export type ToolShape = {
    /** The list as the dialect writes it, for the message about a `tools` that is not one. */
    list: string;
    /** One item as the dialect writes it. */
    item: string;
    /** Checks `tool`'s own fields; the object holding `name` and `description`, and its path (`tools[0].function`). */
    open(tool: Record<string, unknown>, at: string): {fields: Record<string, unknown>; at: string};
    /** Checks what follows the name and description; the function's parameters (a JSON schema of an object). */
    close(tool: Record<string, unknown>, fields: Record<string, unknown>, at: string): Record<string, unknown>;
    /** The key of the parameters in the object `open` returns (`parameters`, Anthropic's `input_schema`). */
    parametersKey: string;
};

/**
 * A `tools` list in any dialect: a list of at most the tool-count limit, each item an object of `shape`, each name a
 * function name of its own, each description a string within the message limit.
 */
export function readToolList(value: unknown, field: string, shape: ToolShape): ToolDefinition[] {
    if (!Array.isArray(value))
        throw bad(field, `\`${field}\` must be ${shape.list}.`);
    const count = checkLimit("toolCount", value.length);
    if (!count.ok)
        throw bad(field, `\`${field}\`: ${count.message}`);
    const names = new Set<string>();
    return value.map((tool: unknown, index) => {
        const itemAt = `${field}[${index}]`;
        if (!isPlainObject(tool))
            throw bad(itemAt, `\`${itemAt}\` must be an object ${shape.item}.`);
        const {fields, at} = shape.open(tool, itemAt);
        const name = functionName(fields.name, `${at}.name`);
        if (names.has(name))
            throw bad(`${at}.name`, `\`${at}.name\` repeats the tool name ${JSON.stringify(name)}: each tool needs its own name.`);
        names.add(name);
        if (fields.description != null && (typeof fields.description !== "string" || fields.description.length > TEXT_LIMITS.message))
            throw bad(`${at}.description`, `\`${at}.description\` must be a string of at most ${TEXT_LIMITS.message} characters.`);
        return {name, description: (fields.description as string | undefined) ?? null, parameters: shape.close(tool, fields, at),
            parametersField: `${at}.${shape.parametersKey}`};
    });
}

/** `strict` on a tool: true or false (strict or not, the arguments are always held to the schema by grammar). */
export function checkStrict(fields: Record<string, unknown>, at: string): void {
    if (fields.strict != null && typeof fields.strict !== "boolean")
        throw bad(`${at}.strict`, `\`${at}.strict\` must be true or false.`);
}

/** Chat completions' tool: `{type: "function", function: {name, description?, parameters?, strict?}}`. */
const CHAT_TOOL: ToolShape = {
    list: "an array of {\"type\": \"function\", \"function\": {...}} objects",
    item: "{\"type\": \"function\", \"function\": {...}}",
    open: (tool, at) => {
        for (const key of Object.keys(tool))
            if (!TOOL_KEYS.has(key))
                throw bad(`${at}.${key.slice(0, 40)}`, `\`${at}.${key.slice(0, 40)}\` is not a field of a tool (it takes "type" and "function").`);
        if (tool.type !== "function")
            throw bad(`${at}.type`, `\`${at}.type\` must be "function" (the only kind of tool this server calls).`);
        const fn = tool.function;
        if (!isPlainObject(fn))
            throw bad(`${at}.function`, `\`${at}.function\` must be an object with "name" and optionally "description", "parameters" and "strict".`);
        for (const key of Object.keys(fn))
            if (!FUNCTION_KEYS.has(key))
                throw bad(`${at}.function.${key.slice(0, 40)}`,
                    `\`${at}.function.${key.slice(0, 40)}\` is not a field of a function (it takes "name", "description", "parameters" and "strict").`);
        return {fields: fn, at: `${at}.function`};
    },
    close: (_tool, fn, at) => {
        checkStrict(fn, at);
        return parametersOf(fn.parameters, `${at}.parameters`);
    },
    parametersKey: "parameters"
};

/** `tools`: an array of `{type: "function", function: {name, description?, parameters?, strict?}}` with distinct names. */
export function readTools(value: unknown, field: string): ToolDefinition[] {
    return readToolList(value, field, CHAT_TOOL);
}

/** A function's parameters: a JSON schema of an object (its arguments are always one JSON object). */
export function parametersOf(value: unknown, field: string): Record<string, unknown> {
    if (value == null)
        return {type: "object", properties: {}};
    if (!isPlainObject(value))
        throw bad(field, `\`${field}\` must be a JSON schema object (of "type": "object").`);
    if (value.type !== undefined && value.type !== "object")
        throw bad(`${field}.type`, `\`${field}.type\` must be "object": a function's arguments are one JSON object.`);
    if (JSON.stringify(value).length > TEXT_LIMITS.message)
        throw bad(field, `\`${field}\` is longer than ${TEXT_LIMITS.message} characters of JSON.`);
    return value;
}

/** `tool_choice`: "none", "auto", "required" or `{type: "function", function: {name}}`. */
export function readToolChoice(value: unknown, field: string): ToolChoice {
    if (value === "none" || value === "auto" || value === "required")
        return value;
    if (!isPlainObject(value))
        throw bad(field, `\`${field}\` must be "none", "auto", "required" or {"type": "function", "function": {"name": "…"}}.`);
    for (const key of Object.keys(value))
        if (key !== "type" && key !== "function")
            throw bad(`${field}.${key.slice(0, 40)}`, `\`${field}.${key.slice(0, 40)}\` is not a field of tool_choice (it takes "type" and "function").`);
    if (value.type !== "function")
        throw bad(`${field}.type`, `\`${field}.type\` must be "function".`);
    const fn = value.function;
    if (!isPlainObject(fn) || Object.keys(fn).some((key) => key !== "name"))
        throw bad(`${field}.function`, `\`${field}.function\` must be {"name": "…"}.`);
    return {name: functionName(fn.name, `${field}.function.name`)};
}

/**
 * The request's tool use once every field is read (they may come in any order): a named choice must name one of
 * `tools`, and a choice that asks for a call needs tools. `null` when the request neither sends tools nor has tool turns.
 */
export function toolUseOf(tools: ToolDefinition[] | undefined, choice: ToolChoice | undefined, parallel: boolean | undefined,
    hasToolTurns: boolean): ToolUse | null {
    const list = tools ?? [];
    if (choice != null && typeof choice === "object" && !list.some((tool) => tool.name === choice.name))
        throw bad("tool_choice.function.name", `\`tool_choice\` names the function ${JSON.stringify(choice.name)}, which is not one of \`tools\`.`);
    if (choice === "required" && list.length === 0)
        throw bad("tool_choice", "`tool_choice: \"required\"` needs `tools` to call.");
    if (list.length === 0 && !hasToolTurns)
        return null;
    // OpenAI's defaults: "auto" with tools, "none" without; parallel calls allowed
    return {tools: list, choice: choice ?? (list.length > 0 ? "auto" : "none"), parallel: parallel ?? true};
}

/** An assistant message's `tool_calls`: `[{id, type: "function", function: {name, arguments}}]`. */
export function readToolCalls(value: unknown, field: string): ToolCall[] {
    if (!Array.isArray(value))
        throw bad(field, `\`${field}\` must be an array of {"id", "type": "function", "function": {"name", "arguments"}} objects.`);
    const count = checkLimit("toolCallCount", value.length);
    if (!count.ok)
        throw bad(field, `\`${field}\`: ${count.message}`);
    return value.map((call: unknown, index) => {
        const at = `${field}[${index}]`;
        if (!isPlainObject(call))
            throw bad(at, `\`${at}\` must be an object {"id", "type": "function", "function": {"name", "arguments"}}.`);
        for (const key of Object.keys(call))
            if (key !== "id" && key !== "type" && key !== "function")
                throw bad(`${at}.${key.slice(0, 40)}`, `\`${at}.${key.slice(0, 40)}\` is not a field of a tool call (it takes "id", "type" and "function").`);
        if (call.type !== "function")
            throw bad(`${at}.type`, `\`${at}.type\` must be "function".`);
        const id = toolCallId(call.id, `${at}.id`);
        const fn = call.function;
        if (!isPlainObject(fn) || Object.keys(fn).some((key) => key !== "name" && key !== "arguments"))
            throw bad(`${at}.function`, `\`${at}.function\` must be {"name": "…", "arguments": "…"}.`);
        const name = functionName(fn.name, `${at}.function.name`);
        if (typeof fn.arguments !== "string" || fn.arguments.length > TEXT_LIMITS.message)
            throw bad(`${at}.function.arguments`, `\`${at}.function.arguments\` must be the arguments as a JSON text (a string).`);
        let parsed: unknown;
        try {
            parsed = JSON.parse(fn.arguments);
        } catch {
            parsed = undefined;
        }
        // the chat template renders the arguments as an object (llama.cpp's common_chat_msgs_parse_oaicompat parses them)
        if (!isPlainObject(parsed))
            throw bad(`${at}.function.arguments`, `\`${at}.function.arguments\` must be a JSON object written as a string.`);
        return {id, name, arguments: fn.arguments};
    });
}

/** A tool call's id (`tool_calls[].id`, a tool message's `tool_call_id`). */
export function toolCallId(value: unknown, field: string): string {
    if (typeof value !== "string" || value === "" || value.length > TEXT_LIMITS.toolCallId)
        throw bad(field, `\`${field}\` must be a tool call id: a non-empty string of at most ${TEXT_LIMITS.toolCallId} characters.`);
    return value;
}
