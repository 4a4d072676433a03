/**
 * Splits a pasted command line into words the way a POSIX shell would (quotes, backslashes, line continuations) — but
 * refuses what a shell would *evaluate*: `$VAR`, `$(…)`, backticks, globs, pipes, redirections, `;` and `&&`. A pasted
 * command that depends on them cannot be priced without guessing their value. Written here rather than taken from
 * shell-quote: its `parse` substitutes environment variables and returns operators as objects, and what is wanted is
 * the opposite — nothing substituted, every such construct refused by name.
 */

/** A command line that cannot be read as words, with what and where. */
export class ShellWordsError extends Error {
    constructor(message: string, readonly at: number) {
        super(message);
        this.name = "ShellWordsError";
    }
}

const OPERATORS = new Set([";", "&", "|", "<", ">", "(", ")"]);
const GLOB = new Set(["*", "?", "["]);

/** The words of `line`; throws {@link ShellWordsError} on an unclosed quote or anything a shell would evaluate. */
export function shellWords(line: string): string[] {
    const words: string[] = [];
    let word: string | null = null;
    const push = (text: string) => {
        word = (word ?? "") + text;
    };
    for (let i = 0; i < line.length; i++) {
        const ch = line[i]!;
        if (ch === "\\") {
            const next = line[i + 1];
            if (next === undefined) throw new ShellWordsError("the command ends with a lone backslash", i);
            i++;
            // a backslash before a line break joins the lines (how forum commands are wrapped)
            if (next === "\n") continue;
            if (next === "\r" && line[i + 1] === "\n") {
                i++;
                continue;
            }
            push(next);
        } else if (ch === "'") {
            const end = line.indexOf("'", i + 1);
            if (end < 0) throw new ShellWordsError("a single quote is never closed", i);
            push(line.slice(i + 1, end));
            i = end;
        } else if (ch === "\"") {
            let text = "";
            let j = i + 1;
            for (; j < line.length && line[j] !== "\""; j++) {
                const c = line[j]!;
                if (c === "$" || c === "`") throw new ShellWordsError(`"${c}" inside double quotes asks the shell for a value this command does not carry; write the value itself`, j);
                if (c === "\\" && j + 1 < line.length && "\"\\$`\n".includes(line[j + 1]!)) {
                    j++;
                    if (line[j] !== "\n") text += line[j];
                } else text += c;
            }
            if (j >= line.length) throw new ShellWordsError("a double quote is never closed", i);
            push(text);
            i = j;
        } else if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
            if (word !== null) words.push(word);
            word = null;
        } else if (ch === "$" || ch === "`") {
            throw new ShellWordsError(`"${ch}" asks the shell for a value this command does not carry; write the value itself`, i);
        } else if (OPERATORS.has(ch)) {
            throw new ShellWordsError(`"${ch}" is shell syntax (a pipe, redirection, list or subshell); paste one command`, i);
        } else if (GLOB.has(ch)) {
            throw new ShellWordsError(`"${ch}" outside quotes is a shell wildcard; quote the pattern as llama.cpp expects it (-ot 'blk\\..*=CPU')`, i);
        } else if (ch === "#" && word === null) {
            break; // a comment runs to the end
        } else push(ch);
    }
    if (word !== null) words.push(word);
    return words;
}
