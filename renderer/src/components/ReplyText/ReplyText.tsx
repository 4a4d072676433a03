import {splitThinking} from "../../markdown/splitThinking";
import {Markdown} from "../Markdown/Markdown";
import "./ReplyText.css";

/** A model's reply: its thinking (splitThinking.ts) folded into "Thinking" above the answer, both as sanitised Markdown. */
export function ReplyText({text}: {text: string}) {
    const {thinking, thinkingOpen, answer} = splitThinking(text);
    return (
        <>
            {thinking != null && (
                <details className="reply-thinking" data-testid="reply-thinking" data-open={thinkingOpen}>
                    <summary>{thinkingOpen ? "Thinking…" : "Thought"} <span className="faint">· {thinking.length} characters</span></summary>
                    <Markdown text={thinking}/>
                </details>
            )}
            {/* a reply without thinking renders as before, even empty */}
            {(thinking == null || answer !== "") && <Markdown text={answer}/>}
        </>
    );
}
