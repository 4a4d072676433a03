/**
 * A reasoning model's reply as the app receives it from node-llama-cpp: its thinking between `<think>` and `</think>`
 * (Qwen3, QwQ and DeepSeek-R1 write these; DeepSeek-R1's template opens the `<think>` in the prompt, so its reply
 * starts inside the thinking and only closes it), then the answer. Shown apart, the thinking folded away, instead of
 * the tags vanishing in the Markdown sanitizer and the thinking reading as part of the answer.
 */
export type SplitReply = {
    /** The thinking, or `null` when the reply has none. */
    thinking: string | null;
    /** Whether the thinking is still being written (no `</think>` yet). */
    thinkingOpen: boolean;
    answer: string;
};

const OPEN = "<think>";
const CLOSE = "</think>";

export function splitThinking(text: string): SplitReply {
    const start = text.trimStart();
    if (start.startsWith(OPEN)) {
        const body = start.slice(OPEN.length);
        const end = body.indexOf(CLOSE);
        return end === -1
            ? {thinking: body.trim(), thinkingOpen: true, answer: ""}
            : {thinking: body.slice(0, end).trim(), thinkingOpen: false, answer: body.slice(end + CLOSE.length).trimStart()};
    }
    // opened by the prompt: a close with no open before it
    const end = text.indexOf(CLOSE);
    if (end !== -1 && !text.slice(0, end).includes(OPEN))
        return {thinking: text.slice(0, end).trim(), thinkingOpen: false, answer: text.slice(end + CLOSE.length).trimStart()};
    return {thinking: null, thinkingOpen: false, answer: text};
}
