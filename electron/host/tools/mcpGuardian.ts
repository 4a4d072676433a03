/**
 * Runs one stdio MCP server so that it cannot outlive the app: `node mcpGuardian.js <command> [args…]` starts the
 * command in a process group of its own, sharing this process's stdin, stdout and stderr (the MCP messages go straight
 * between the app and the server), and ends that whole group — the server and anything it started (`npx` starts a
 * second Node) — when the server exits, when the app asks (SIGTERM, SIGINT, SIGHUP: McpConnection.ts closes it so), or
 * when the app is gone without asking (killed with SIGKILL: this process is then given another parent, checked every
 * {@link PARENT_CHECK_MS}). Ending is SIGTERM to the group, then SIGKILL after {@link GRACE_MS}.
 *
 * POSIX only (process groups); McpConnection.ts starts servers directly elsewhere. Imports nothing of the app: it runs
 * as a process of its own.
 */
import {spawn} from "node:child_process";

/** How often the parent is checked. */
const PARENT_CHECK_MS = 250;
/** How long the group has after SIGTERM. */
const GRACE_MS = 1_500;

const [command, ...args] = process.argv.slice(2);
if (command == null) {
    process.stderr.write("mcpGuardian: no command to run\n");
    process.exit(2);
}

const app = process.ppid;
const server = spawn(command, args, {stdio: "inherit", detached: true});
let ending = false;

/** Whether any process of the server's group is still there. */
function groupAlive(group: number): boolean {
    try {
        process.kill(-group, 0);
        return true;
    } catch {
        return false;
    }
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
    try {
        process.kill(-group, signal);
    } catch {
        // gone already
    }
}

/** Ends the server's whole group (SIGTERM, then SIGKILL), then this process with `code`. */
function end(code: number): void {
    if (ending)
        return;
    ending = true;
    const group = server.pid;
    if (group == null)
        process.exit(code);
    signalGroup(group, "SIGTERM");
    const started = Date.now();
    const wait = setInterval(() => {
        if (groupAlive(group) && Date.now() - started < GRACE_MS)
            return;
        clearInterval(wait);
        signalGroup(group, "SIGKILL");
        process.exit(code);
    }, 50);
}

server.on("error", (error) => {
    process.stderr.write(`could not start ${command}: ${error.message}\n`);
    ending = true;
    process.exit(127);
});
server.on("exit", (code, signal) => end(code ?? (signal != null ? 128 + 15 : 1)));
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
    process.on(signal, () => end(143));
setInterval(() => {
    if (process.ppid !== app)
        end(1);
}, PARENT_CHECK_MS);
