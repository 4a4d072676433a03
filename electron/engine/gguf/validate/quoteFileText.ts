/** Longest excerpt of file text shown in a message, in code points. */
const defaultMaxCodePoints = 48;
/** Control, format (bidi overrides, zero-width), line- and paragraph-separator characters. */
const unprintable = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * Text read from a GGUF file (a key, a tensor name, the architecture) made safe to put in an error message: at most
 * `maxCodePoints` code points (longer text ends in "…"), control and formatting characters replaced by U+FFFD, in
 * double quotes. A message built from it stays one short printable line whatever the file holds.
 */
export function quoteFileText(text: string, maxCodePoints = defaultMaxCodePoints): string {
    const codePoints = Array.from(text.length > 4 * maxCodePoints ? text.slice(0, 4 * maxCodePoints) : text);
    const shown = codePoints.length > maxCodePoints ? codePoints.slice(0, maxCodePoints).join("") + "…" : codePoints.join("");
    return `"${shown.replace(unprintable, "\uFFFD")}"`;
}
