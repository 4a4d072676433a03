import type {McpServerConfig, McpServerLaunch} from "../../../../../../electron/contract/ipc";
import {DEFAULT_TOOL_CALL_SECONDS} from "../../../../../../electron/contract/tools";

/** A server's configuration as the form's text fields hold it. */
export type ServerFormText = {
    name: string; enabled: boolean; transport: McpServerLaunch["transport"];
    command: string; args: string; env: string; cwd: string; url: string; headers: string; timeout: string;
};

export const EMPTY_FORM: ServerFormText = {
    name: "", enabled: true, transport: "stdio", command: "", args: "", env: "", cwd: "", url: "", headers: "", timeout: String(DEFAULT_TOOL_CALL_SECONDS)
};

const lines = (text: string) => text.split("\n").map((line) => line.replace(/\r$/, "")).filter((line) => line.trim() !== "");

/** `NAME<sep>value` lines as an object; a line without the separator is refused by its number, never skipped. */
function pairs(text: string, separator: string, what: string): Record<string, string> {
    const entries = lines(text).map((line, index) => {
        const at = line.indexOf(separator);
        if (at <= 0)
            throw new Error(`Line ${index + 1} of the ${what} has no "${separator}" after a name.`);
        return [line.slice(0, at).trim(), line.slice(at + 1).trim()] as const;
    });
    return Object.fromEntries(entries);
}

export function toFormText(config: McpServerConfig): ServerFormText {
    const launch = config.launch;
    return {
        name: config.name, enabled: config.enabled, transport: launch.transport, timeout: String(config.callTimeoutSeconds),
        command: launch.transport === "stdio" ? launch.command : "", args: launch.transport === "stdio" ? launch.args.join("\n") : "",
        env: launch.transport === "stdio" ? Object.entries(launch.env).map(([name, value]) => `${name}=${value}`).join("\n") : "",
        cwd: launch.transport === "stdio" ? launch.cwd ?? "" : "",
        url: launch.transport === "http" ? launch.url : "",
        headers: launch.transport === "http" ? Object.entries(launch.headers).map(([name, value]) => `${name}: ${value}`).join("\n") : ""
    };
}

/**
 * The form's text as a configuration for the host to check (it checks every field again); throws a sentence for what
 * the form itself cannot read. `alwaysAllow` is kept from the server being edited.
 */
export function fromFormText(form: ServerFormText, alwaysAllow: string[]): McpServerConfig {
    const launch: McpServerLaunch = form.transport === "stdio"
        ? {transport: "stdio", command: form.command.trim(), args: lines(form.args), env: pairs(form.env, "=", "environment"), cwd: form.cwd.trim() === "" ? null : form.cwd.trim()}
        : {transport: "http", url: form.url.trim(), headers: pairs(form.headers, ":", "headers")};
    return {name: form.name.trim(), enabled: form.enabled, launch, callTimeoutSeconds: Number(form.timeout), alwaysAllow};
}
