/**
 * Where a test that needs a device, a built binary or a browser may skip. On a developer machine a missing one is a
 * skip with its reason printed; in CI (`CI=true`, `TENSORWISE_REQUIRE_VULKAN=1` as .ci/run sets it, or
 * `TENSORWISE_REQUIRE_DEVICE=1`) it is a failure, so a suite that silently stopped running cannot pass.
 */

/** Whether this run must have every device and build the tests use. */
export function devicesRequired(env: NodeJS.ProcessEnv = process.env): boolean {
    return env.TENSORWISE_REQUIRE_DEVICE === "1" || env.TENSORWISE_REQUIRE_VULKAN === "1" || env.CI === "true";
}

/** Raised instead of a skip when {@link devicesRequired}. */
export class RequiredResourceMissingError extends Error {
    constructor(what: string, reason: string) {
        super(`${what} cannot run here, and this run requires it (CI / TENSORWISE_REQUIRE_DEVICE=1): ${reason}`);
        this.name = "RequiredResourceMissingError";
    }
}

/**
 * `reason` (null: nothing missing) as a skip reason: printed and returned on a developer machine, thrown as a
 * {@link RequiredResourceMissingError} where {@link devicesRequired}.
 */
export function requiredOrSkip(what: string, reason: string | null, env: NodeJS.ProcessEnv = process.env): string | null {
    if (reason == null) return null;
    if (devicesRequired(env)) throw new RequiredResourceMissingError(what, reason);
    console.warn(`[skip] ${what}: ${reason} (set TENSORWISE_REQUIRE_DEVICE=1 to make this a failure)`);
    return reason;
}
