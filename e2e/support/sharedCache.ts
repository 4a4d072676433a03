/**
 * A cache folder shared by the app launches of one e2e run that measure nothing about the cache themselves: the
 * first of them to Auto-offload a model profiles this machine for its weight shapes, the others reuse that profile
 * (a profile of the tiny model takes 20-40 s here). The journey (journey.ts) keeps a cache of its own: it checks that
 * its first Auto-offload profiles and the next reuses the profile. globalSetup.ts makes the folder.
 */
export const SHARED_CACHE_ENV = "TENSORWISE_E2E_SHARED_CACHE";

/** The run's shared cache folder (globalSetup.ts made it). */
export function sharedCacheDir(): string {
    const dir = process.env[SHARED_CACHE_ENV];
    if (dir == null)
        throw new Error(`${SHARED_CACHE_ENV} is not set: run the e2e specs through e2e/vitest.config.ts (its globalSetup makes the folder)`);
    return dir;
}
