/** Where CLI commands write: stdout for results, stderr for progress and errors. */
export type CliIo = {
    out(line: string): void;
    err(line: string): void;
};

export const processIo: CliIo = {
    out: (line) => process.stdout.write(line + "\n"),
    err: (line) => process.stderr.write(line + "\n")
};

/** How often a countdown that only changes its numbers is printed again when stderr is a file or a pipe. */
const REPEAT_PROGRESS_MS = 10_000;

/**
 * A progress printer for `io.err`. Progress comes every half second while a long step runs (the profiler's countdown);
 * on a terminal each message is printed, elsewhere (a log file, CI) a message whose words did not change — only its
 * numbers — is printed at most every {@link REPEAT_PROGRESS_MS}, so logs keep one line per step, not one per tick.
 */
export function progressLines(io: CliIo, terminal = io === processIo && process.stderr.isTTY === true): (message: string) => void {
    let lastWords = "";
    let lastAt = 0;
    return (message) => {
        const words = message.replace(/\d+(\.\d+)?/g, "#");
        const now = performance.now();
        if (terminal || words !== lastWords || now - lastAt >= REPEAT_PROGRESS_MS) {
            lastWords = words;
            lastAt = now;
            io.err(message);
        }
    };
}
