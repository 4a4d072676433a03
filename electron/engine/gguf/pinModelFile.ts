/**
 * A model file held open from before its validation until llama.cpp has loaded it, so that the validator, the planner
 * and llama.cpp all read the same bytes. Validating a path and then handing llama.cpp the same path lets a file
 * replaced by a rename in between (a hostile file of the same size, head count 0) reach llama_model_load_from_file,
 * which aborts the whole engine on it (GGML_ASSERT in llm_load_hparams' checks).
 *
 * On Linux the file is opened once and every reader is given `/proc/<pid>/fd/<fd>`: opening that path opens the inode
 * this process holds, whatever the original path names by then, from this process and from the validator's child (a
 * process of the same user may open another's `/proc/<pid>/fd` entries). Nothing is written and the file keeps its
 * identity (device, inode, ctime), so ValidatedFileCache.ts still recognises a file it validated before.
 * Elsewhere a hard link to the opened file is taken in a private folder beside it (same filesystem), checked to be
 * the inode opened, and removed on release.
 *
 * Not pinned, and said so by `pinned: false`: a split model (`-00001-of-00003.gguf`: llama.cpp opens the other parts
 * by names made from this one, llama_split_prefix), and, off Linux, a file whose folder takes no link. Writes into the
 * validated file itself are not covered: they change the bytes of the same inode, which only a private copy would
 * avoid.
 */
import {link, mkdtemp, open, rm, stat} from "node:fs/promises";
import path from "node:path";

/** llama.cpp's split file names: `{prefix}-{part:05d}-of-{count:05d}.gguf` (source: llama_split_path in llama.cpp). */
const SPLIT_NAME = /-\d{5}-of-\d{5}\.gguf$/i;

/**
 * A model file pinned for one load; {@link release} once nothing will open {@link path} again: the model is unloaded
 * (the server's prompt worker opens the file after the load), or the load failed.
 */
export type PinnedModelFile = {
    /** What the validator, the planner and llama.cpp open: the pinned file, or the original path when not pinned. */
    readonly path: string;
    /** Whether {@link path} opens the file as it was when pinned, whatever happens to the original path since. */
    readonly pinned: boolean;
    release(): Promise<void>;
};

/** Pins `modelPath` (see the module comment). Rejects as `open` does when the file cannot be opened. */
export async function pinModelFile(modelPath: string): Promise<PinnedModelFile> {
    if (SPLIT_NAME.test(modelPath))
        return {path: modelPath, pinned: false, release: async () => {}};
    const handle = await open(modelPath, "r");
    if (process.platform === "linux")
        return {path: `/proc/${process.pid}/fd/${handle.fd}`, pinned: true, release: once(() => handle.close())};
    let dir: string | null = null;
    try {
        dir = await mkdtemp(path.join(path.dirname(modelPath), ".tensorwise-load-"));
        const linked = path.join(dir, path.basename(modelPath));
        await link(modelPath, linked);
        const [opened, atLink] = await Promise.all([handle.stat({bigint: true}), stat(linked, {bigint: true})]);
        // the path may have been swapped between the open and the link: the link must be the file opened
        if (opened.dev !== atLink.dev || opened.ino !== atLink.ino)
            throw new Error(`${modelPath} was replaced while it was being opened`);
        const privateDir = dir;
        return {path: linked, pinned: true, release: once(() => rm(privateDir, {recursive: true, force: true}))};
    } catch {
        if (dir != null)
            await rm(dir, {recursive: true, force: true});
        return {path: modelPath, pinned: false, release: async () => {}};
    } finally {
        await handle.close();
    }
}

function once(run: () => Promise<void>): () => Promise<void> {
    let done: Promise<void> | null = null;
    return () => (done ??= run());
}
