// Command-line parsing for the benchmark and measurement scripts: node:util's parseArgs plus `--help` / `-h`, which
// prints the script's own header comment (the one place its usage is written), and a one-line error instead of a stack
// trace when an option is unknown or malformed.
import fs from "node:fs";
import {parseArgs} from "node:util";
import {fileURLToPath} from "node:url";

/** The leading `//` comment block of a script file, without the comment markers. */
export function headerComment(file) {
    const lines = [];
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
        if (line.startsWith("#!")) continue;
        if (!line.startsWith("//")) break;
        lines.push(line.replace(/^\/\/ ?/, ""));
    }
    return lines.join("\n");
}

/**
 * parseArgs over `options` for the script at `importMetaUrl` (pass `import.meta.url`). `--help` prints the script's
 * header and exits 0; a bad command line prints the reason and exits 2.
 */
export function parseScriptArgs(importMetaUrl, options) {
    const file = fileURLToPath(importMetaUrl);
    let parsed;
    try {
        parsed = parseArgs({options: {...options, help: {type: "boolean", short: "h"}}});
    } catch (error) {
        console.error(`${error instanceof Error ? error.message : String(error)}\nrun with --help for the options`);
        process.exit(2);
    }
    if (parsed.values.help === true) {
        console.log(headerComment(file));
        process.exit(0);
    }
    return parsed;
}
