/**
 * Model output is untrusted: strips terminal control sequences (ESC, C0/C1 controls other than newline and tab)
 * so a reply cannot move the cursor, retitle the terminal or hide text.
 */
export function terminalSafe(text: string): string {
    // eslint-disable-next-line no-control-regex
    return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "\ufffd");
}
