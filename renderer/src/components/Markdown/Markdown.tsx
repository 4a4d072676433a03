import {useMemo} from "react";
import {renderMarkdown} from "../../markdown/renderMarkdown";
import "./Markdown.css";

/** Untrusted model output as sanitised Markdown (see renderMarkdown). */
export function Markdown({text}: {text: string}) {
    const html = useMemo(() => renderMarkdown(text), [text]);
    return <div className="markdown" dangerouslySetInnerHTML={{__html: html}}/>;
}
