import {useState} from "react";

/** Copies `text`; says so for a moment on the button. */
export function CopyButton({text, testId, label = "Copy"}: {text: string; testId: string; label?: string}) {
    const [copied, setCopied] = useState(false);
    return (
        <button className="button small" data-testid={testId} onClick={() => {
            void navigator.clipboard?.writeText(text).then(() => {
                setCopied(true);
                setTimeout(() => setCopied(false), 1500);
            });
        }}>{copied ? "Copied" : label}</button>
    );
}
