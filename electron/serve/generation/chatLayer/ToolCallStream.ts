/**
 * A reply templated by llama.cpp's chat layer (tools, or a reasoning model), read as it is generated: after each piece
 * of text the whole reply so far is parsed again with `is_partial` (common_chat_parse), and only what is new since the
 * last parse is handed on: thinking to append, content to append, a tool call that opens (its id and name), arguments
 * to append. This is llama-server's way
 * (common_chat_msg_diff::compute_diffs in common/chat.cpp), so a client's pieces always add up to the final reply.
 * Each call's id is fixed when it opens (the model's own id, else one of the API's style), and the final reply
 * carries the same ids.
 */
import {OpenAiError} from "../../common/OpenAiError.js";
import type {ParsedReply} from "./toolCallPrompt.js";

/** One new piece of a reply: thinking or content to append, or a tool call's opening (`opens`) and/or arguments to append. */
export type ReplyDelta =
    | {type: "reasoning"; text: string}
    | {type: "content"; text: string}
    | {type: "tool_call"; index: number; id: string; name: string; opens: boolean; arguments: string};

type SentCall = {id: string; name: string; arguments: string};

export class ToolCallStream {
    private text = "";
    private content = "";
    private reasoning = "";
    private readonly calls: SentCall[] = [];

    /**
     * @param parse the reply's parser (toolCallPrompt.ts); `partial`: more text may follow.
     * @param newId an id for a call the model gave none (`call_…`, `toolu_…`).
     */
    constructor(private readonly parse: (text: string, partial: boolean) => ParsedReply, private readonly newId: () => string) {}

    /**
     * Appends generated text and returns what is new. A partial reply llama.cpp cannot parse yet, or whose parse
     * takes back something already handed on (a marker it recognises only later), hands on nothing until it can.
     */
    /** Whether the answer has begun (content or a tool call handed on): until then the reply is thinking. */
    get answering(): boolean {
        return this.content !== "" || this.calls.length > 0;
    }

    push(text: string): ReplyDelta[] {
        this.text += text;
        let parsed: ParsedReply;
        try {
            parsed = this.parse(this.text, true);
        } catch {
            return [];
        }
        return this.diff(parsed, false);
    }

    /**
     * The whole reply (`text` as generated; `partial` when it was cut short by the length), what is still new in it,
     * and its tool calls with the ids they were handed on with. Throws a 500 when the final parse contradicts what was
     * already handed on.
     */
    finish(text: string, partial: boolean): {deltas: ReplyDelta[]; reply: ParsedReply} {
        this.text = text;
        const parsed = this.parse(text, partial);
        const deltas = this.diff(parsed, true);
        return {deltas, reply: {content: this.content, reasoning: this.reasoning, toolCalls: this.calls.map((call) => ({...call}))}};
    }

    private diff(parsed: ParsedReply, final: boolean): ReplyDelta[] {
        const deltas: ReplyDelta[] = [];
        const contradicts = (what: string) => {
            if (final)
                throw new OpenAiError(500, `The model's reply parsed differently at its end than while it streamed (${what}).`, "server_error", "unparsable_reply");
        };
        if (parsed.reasoning.startsWith(this.reasoning)) {
            if (parsed.reasoning.length > this.reasoning.length) {
                deltas.push({type: "reasoning", text: parsed.reasoning.slice(this.reasoning.length)});
                this.reasoning = parsed.reasoning;
            }
        } else
            contradicts("its thinking");
        if (parsed.content.startsWith(this.content)) {
            if (parsed.content.length > this.content.length) {
                deltas.push({type: "content", text: parsed.content.slice(this.content.length)});
                this.content = parsed.content;
            }
        } else
            contradicts("its text");
        if (parsed.toolCalls.length < this.calls.length)
            contradicts("fewer tool calls");
        parsed.toolCalls.forEach((call, index) => {
            const sent = this.calls[index];
            if (sent == null) {
                // a call opens once its name is whole: when its arguments have begun, a later call exists, or the reply ended
                if (call.name === "" || (call.arguments === "" && index === parsed.toolCalls.length - 1 && !final))
                    return;
                if (index !== this.calls.length)
                    return;
                const opened = {id: call.id !== "" ? call.id : this.newId(), name: call.name, arguments: call.arguments};
                this.calls.push(opened);
                deltas.push({type: "tool_call", index, id: opened.id, name: opened.name, opens: true, arguments: call.arguments});
                return;
            }
            if (call.name !== sent.name) {
                contradicts(`the name of tool call ${index}`);
                return;
            }
            if (!call.arguments.startsWith(sent.arguments)) {
                contradicts(`the arguments of tool call ${index}`);
                return;
            }
            if (call.arguments.length > sent.arguments.length) {
                deltas.push({type: "tool_call", index, id: sent.id, name: sent.name, opens: false, arguments: call.arguments.slice(sent.arguments.length)});
                sent.arguments = call.arguments;
            }
        });
        return deltas;
    }
}

/**
 * A reply cut by the length, as a whole reply gives it: its calls but a last one cut inside its arguments. A partial
 * parse (common_chat_parse with is_partial) gives that call with the arguments written so far (`{"zone": "c`), which
 * no client can run and Anthropic's `tool_use` cannot carry (its input is an object); every call before it, and a
 * last one whose arguments are a whole JSON value, were complete when the reply was cut. A stream has already handed
 * that last call's pieces on; it ends with the same finish reason ("length"), which says the reply was cut.
 */
export function withoutUnfinishedCall(reply: ParsedReply): ParsedReply {
    const last = reply.toolCalls.at(-1);
    return last == null || isWholeJson(last.arguments) ? reply : {...reply, toolCalls: reply.toolCalls.slice(0, -1)};
}

/** Whether `text` is a whole JSON value (a tool call's arguments finished, not cut inside). */
export function isWholeJson(text: string): boolean {
    try {
        JSON.parse(text);
        return true;
    } catch {
        return false;
    }
}
