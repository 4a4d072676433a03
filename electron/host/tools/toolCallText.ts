/**
 * What the model reads of a tool call: the one place a saved call becomes prompt text, so a reply's next round, a
 * later reply and a reply in an imported conversation all give the model the same words. A result is capped at
 * {@link TOOL_RESULT_MODEL_CHARS} with the cut said; an image is described (node-llama-cpp 3.22.1 exposes no
 * multimodal input: this app's models read no images); a call that did not run says why.
 */
import type {ChatTurn} from "../../contract/chat.js";
import type {ChatMessage} from "../../contract/ipc.js";
import {TOOL_RESULT_MODEL_CHARS, type ToolCallRecord} from "../../contract/tools.js";
import {decodedSize} from "./toToolResult.js";

/** The result text of `call` as the model is given it. */
export function toolCallText(call: ToolCallRecord): string {
    switch (call.state) {
        case "denied":
            return "The user denied this call: it did not run.";
        case "stopped":
            return "The user stopped the reply before this call finished.";
        case "failed":
            return `The call failed: ${call.error ?? "no reason was given"}`;
        case "pending":
        case "running":
            return "This call was not run: the reply ended before it did.";
        case "done":
            break;
    }
    const result = call.result;
    if (result == null)
        return "The call returned nothing.";
    const pieces = result.parts.map((part) => part.type === "text" ? part.text
        : part.type === "image" ? `[An image (${part.mimeType}, ${decodedSize(part.data)}) the user can see; this model reads no images.]`
            : `[${part.text}]`);
    if (result.structured != null && !result.parts.some((part) => part.type === "text"))
        pieces.push(result.structured);
    let text = pieces.join("\n");
    if (result.capped != null)
        text += `\n[The result was cut: ${result.capped}.]`;
    if (text.length > TOOL_RESULT_MODEL_CHARS)
        text = `${text.slice(0, TOOL_RESULT_MODEL_CHARS)}\n[The rest of the result (${(text.length - TOOL_RESULT_MODEL_CHARS).toLocaleString("en-US")} characters) was cut.]`;
    return result.isError ? `The tool reported an error: ${text}` : text;
}

/** A saved message as the engine's turn: its text, and its calls with what the model reads of each. */
export function chatTurnOf(message: ChatMessage): ChatTurn {
    const calls = message.toolCalls;
    return calls == null || calls.length === 0 ? {role: message.role, text: message.text} : {
        role: message.role, text: message.text,
        toolCalls: calls.map((call) => ({id: call.id, name: call.tool, arguments: call.arguments, result: toolCallText(call)}))
    };
}
