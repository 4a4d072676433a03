/**
 * Tool use in an Anthropic Messages request, read from the client's side of the trust boundary and mapped onto the
 * server's one tool path (toolRequest.ts, toolCallPrompt.ts): `tools` (custom tools: name, description, input_schema),
 * `tool_choice` (`auto`, `any` → "required", `tool` → a named function, `none`; `disable_parallel_tool_use`), and the
 * content blocks of tool turns: an assistant's `tool_use` and a user's `tool_result`. The shapes are the
 * `@anthropic-ai/sdk` package's (resources/messages/messages.d.ts: Tool, ToolChoice, ToolUseBlockParam,
 * ToolResultBlockParam). Anthropic's server tools (bash, web_search, text_editor…) run on Anthropic's side and are
 * refused by name, as is every field this server cannot honour.
 */
import {TEXT_LIMITS} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {type ToolCall, type ToolChoice, type ToolDefinition, type ToolUse} from "../../common/GenerationRequest.js";
import {functionName, isPlainObject, parametersOf, readToolList, toolCallId, type ToolShape} from "../openai/toolRequest.js";

const TOOL_KEYS = new Set(["type", "name", "description", "input_schema", "cache_control", "strict", "eager_input_streaming"]);

function bad(field: string, message: string): OpenAiError {
    return OpenAiError.badRequest(message, field);
}

/** `{type: "ephemeral"}`, optionally with a `ttl` of "5m" or "1h" (Anthropic's `CacheControlEphemeral`): accepted, every prefix is cached anyway. */
export function checkCacheControl(value: unknown, param: string): void {
    if (value == null)
        return;
    const {type, ttl, ...rest} = (isPlainObject(value) ? value : {}) as Record<string, unknown>;
    if (type !== "ephemeral" || (ttl != null && ttl !== "5m" && ttl !== "1h") || Object.keys(rest).length > 0)
        throw bad(param, `${param} must be {"type": "ephemeral"}, optionally with "ttl": "5m" or "1h".`);
}

/** An Anthropic custom tool: `{name, description?, input_schema, cache_control?, strict?, eager_input_streaming?}`. */
const ANTHROPIC_TOOL: ToolShape = {
    list: "a list of {\"name\", \"description\", \"input_schema\"} objects",
    item: "{\"name\", \"description\", \"input_schema\"}",
    open: (tool, at) => {
        if (tool.type != null && tool.type !== "custom")
            throw bad(`${at}.type`, `\`${at}.type\` is ${JSON.stringify(String(tool.type).slice(0, 40))}: Anthropic's server tools run on Anthropic's side; ` +
                "this server calls custom tools only (leave `type` out or send \"custom\").");
        for (const key of Object.keys(tool))
            if (!TOOL_KEYS.has(key))
                throw bad(`${at}.${key.slice(0, 40)}`, `\`${at}.${key.slice(0, 40)}\` is not supported by this server (a tool takes ${[...TOOL_KEYS].join(", ")}).`);
        return {fields: tool, at};
    },
    close: (tool, _fields, at) => {
        if (!isPlainObject(tool.input_schema) || tool.input_schema.type !== "object")
            throw bad(`${at}.input_schema`, `\`${at}.input_schema\` must be a JSON schema of "type": "object" (a tool's input is one JSON object).`);
        // strict or not, the input is always held to the schema by grammar; it always streams as it is generated
        for (const flag of ["strict", "eager_input_streaming"] as const)
            if (tool[flag] != null && typeof tool[flag] !== "boolean")
                throw bad(`${at}.${flag}`, `\`${at}.${flag}\` must be true or false.`);
        checkCacheControl(tool.cache_control, `\`${at}.cache_control\``);
        return parametersOf(tool.input_schema, `${at}.input_schema`);
    },
    parametersKey: "input_schema"
};

/** `tools`: custom tools `{name, description?, input_schema, cache_control?, strict?, eager_input_streaming?}` with distinct names. */
export function readAnthropicTools(value: unknown): ToolDefinition[] {
    return readToolList(value, "tools", ANTHROPIC_TOOL);
}

/** `tool_choice` as the server's choice, and whether parallel calls are allowed (`disable_parallel_tool_use`). */
export function readAnthropicToolChoice(value: unknown): {choice: ToolChoice; parallel: boolean | undefined} {
    if (!isPlainObject(value))
        throw bad("tool_choice", "`tool_choice` must be an object {\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}.");
    const {type, name, disable_parallel_tool_use: disable, ...rest} = value;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw bad(`tool_choice.${extra.slice(0, 40)}`, `\`tool_choice.${extra.slice(0, 40)}\` is not a field of tool_choice (it takes type, name and disable_parallel_tool_use).`);
    if (type !== "auto" && type !== "any" && type !== "tool" && type !== "none")
        throw bad("tool_choice.type", "`tool_choice.type` must be \"auto\", \"any\", \"tool\" or \"none\".");
    if (disable != null && (typeof disable !== "boolean" || type === "none"))
        throw bad("tool_choice.disable_parallel_tool_use", "`tool_choice.disable_parallel_tool_use` must be true or false, and goes with \"auto\", \"any\" or \"tool\".");
    if (type !== "tool" && name != null)
        throw bad("tool_choice.name", "`tool_choice.name` goes only with \"type\": \"tool\".");
    const parallel = disable == null ? undefined : !disable;
    if (type === "tool")
        return {choice: {name: functionName(name, "tool_choice.name")}, parallel};
    return {choice: type === "any" ? "required" : type, parallel};
}

/**
 * The request's tool use: a `tool` choice must name one of `tools`, and `any` or `tool` needs tools. `null` when the
 * request neither sends tools nor has tool turns.
 */
export function anthropicToolUse(tools: ToolDefinition[] | undefined, choice: {choice: ToolChoice; parallel: boolean | undefined} | undefined,
    hasToolTurns: boolean): ToolUse | null {
    const list = tools ?? [];
    const picked = choice?.choice;
    if (typeof picked === "object" && !list.some((tool) => tool.name === picked.name))
        throw bad("tool_choice.name", `\`tool_choice.name\` names the tool ${JSON.stringify(picked.name)}, which is not one of \`tools\`.`);
    if ((picked === "required" || typeof picked === "object") && list.length === 0)
        throw bad("tool_choice", "`tool_choice` of type \"any\" or \"tool\" needs `tools` to call.");
    if (list.length === 0 && !hasToolTurns)
        return null;
    // Anthropic's defaults: "auto" (with or without tools: none can be called without), parallel calls allowed
    return {tools: list, choice: picked ?? (list.length > 0 ? "auto" : "none"), parallel: choice?.parallel ?? true};
}

/** An assistant's `tool_use` block `{type, id, name, input, cache_control?}` as a tool call (its input written as JSON). */
export function readToolUseBlock(block: Record<string, unknown>, at: string): ToolCall {
    const {type: _type, id, name, input, cache_control: cacheControl, ...rest} = block;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw bad(`${at}.${extra.slice(0, 40)}`, `\`${at}.${extra.slice(0, 40)}\` is not supported by this server (a tool_use block takes id, name, input and cache_control).`);
    if (!isPlainObject(input))
        throw bad(`${at}.input`, `\`${at}.input\` must be an object (the tool's input).`);
    const written = JSON.stringify(input);
    if (written.length > TEXT_LIMITS.message)
        throw bad(`${at}.input`, `\`${at}.input\` is longer than ${TEXT_LIMITS.message} characters of JSON.`);
    checkCacheControl(cacheControl, `\`${at}.cache_control\``);
    return {id: toolCallId(id, `${at}.id`), name: functionName(name, `${at}.name`), arguments: written};
}

/**
 * A user's `tool_result` block `{type, tool_use_id, content?, is_error?, cache_control?}`: the id it answers and the
 * result's text (a string or text blocks). `is_error: true` is told to the model in the text ("Error: …"): chat
 * templates have no other place for it (llama.cpp's server_chat_convert_anthropic_to_oai has none either).
 */
export function readToolResultBlock(block: Record<string, unknown>, at: string): {toolUseId: string; text: string} {
    const {type: _type, tool_use_id: toolUseId, content, is_error: isError, cache_control: cacheControl, ...rest} = block;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw bad(`${at}.${extra.slice(0, 40)}`,
            `\`${at}.${extra.slice(0, 40)}\` is not supported by this server (a tool_result block takes tool_use_id, content, is_error and cache_control).`);
    if (isError != null && typeof isError !== "boolean")
        throw bad(`${at}.is_error`, `\`${at}.is_error\` must be true or false.`);
    checkCacheControl(cacheControl, `\`${at}.cache_control\``);
    let text: string;
    if (content == null)
        text = "";
    else if (typeof content === "string")
        text = content;
    else if (Array.isArray(content))
        text = content.map((part: unknown, index) => {
            const partAt = `${at}.content[${index}]`;
            if (!isPlainObject(part) || part.type !== "text")
                throw bad(partAt, `\`${partAt}\` must be a text block {"type": "text", "text": "…"}: this model reads text only.`);
            const {type: _partType, text: partText, cache_control: partCache, ...partRest} = part;
            if (typeof partText !== "string" || Object.keys(partRest).length > 0)
                throw bad(partAt, `\`${partAt}\` must be {"type": "text", "text": "…"} (and optionally cache_control).`);
            checkCacheControl(partCache, `\`${partAt}.cache_control\``);
            return partText;
        }).join("");
    else
        throw bad(`${at}.content`, `\`${at}.content\` must be a string or a list of text blocks.`);
    if (text.length > TEXT_LIMITS.message)
        throw bad(`${at}.content`, `\`${at}.content\` is longer than ${TEXT_LIMITS.message} characters.`);
    return {toolUseId: toolCallId(toolUseId, `${at}.tool_use_id`), text: isError === true ? `Error: ${text}` : text};
}
