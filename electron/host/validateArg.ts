/** Checks of request arguments at the trust boundary (web requests arrive as untyped JSON). */
import {HostError} from "./HostError.js";

export function requireObject<T>(arg: T): T & Record<string, unknown> {
    if (arg == null || typeof arg !== "object" || Array.isArray(arg))
        throw new HostError("bad-request", "the request needs an argument object");
    return arg as T & Record<string, unknown>;
}

export function requireString(arg: Record<string, unknown>, key: string): string {
    const value = arg[key];
    if (typeof value !== "string" || value === "")
        throw new HostError("bad-request", `"${key}" must be a non-empty string`);
    return value;
}

export function optionalNumber(arg: Record<string, unknown>, key: string): number | undefined {
    const value = arg[key];
    if (value == null)
        return undefined;
    if (typeof value !== "number" || !Number.isFinite(value))
        throw new HostError("bad-request", `"${key}" must be a number`);
    return value;
}
