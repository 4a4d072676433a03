import os from "node:os";
import path from "node:path";

/**
 * Where Mesa keeps the shaders it compiled for this user (Mesa's disk cache: `MESA_SHADER_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/mesa_shader_cache`, else `~/.cache/mesa_shader_cache`), as seen from `env`.
 */
export function mesaShaderCacheDir(env: NodeJS.ProcessEnv = process.env): string {
    return env.MESA_SHADER_CACHE_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "mesa_shader_cache");
}

/**
 * The environment of a process whose caches are `dir`'s alone (`XDG_CACHE_HOME`: the machine profile, the KV costs,
 * so its first Auto-offload measures this machine), except Mesa's compiled shaders, which stay where every other
 * process finds them: with a cache of its own, llvmpipe compiles every Vulkan pipeline again (about 25 s of a 2-core
 * machine per process, measured: a tiny model's first reply on llvmpipe took 27–30 s cold and 6–10 s warm) and the
 * test learns nothing from it.
 */
export function isolatedCacheEnv(dir: string, env: NodeJS.ProcessEnv = process.env): {XDG_CACHE_HOME: string; MESA_SHADER_CACHE_DIR: string} {
    return {XDG_CACHE_HOME: dir, MESA_SHADER_CACHE_DIR: mesaShaderCacheDir(env)};
}
