/**
 * Which model files a client may make the engine open. In web mode a request is only as trustworthy as the page that
 * sent it, so only files inside the models folders are opened (plus any the user picked in a native dialog); the
 * answer for a path outside them is the same whether it exists or not, so requests cannot probe the file system.
 * The Electron window, where only the user drives the bundled UI, may open any path (`anyPath`).
 */
import {promises as fs} from "node:fs";
import path from "node:path";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

export type ModelAccessOptions = {
    /** Folders whose models any client may open; the app's own models folder (uploads land there) first. */
    folders: readonly string[];
    /** Any absolute path may be opened. Defaults to `false`. */
    anyPath?: boolean;
};

export class ModelAccess {
    /** The models folders, resolved: the app's own first, then each `--model-dir`. */
    readonly folders: readonly string[];
    private readonly approved = new Set<string>();

    constructor(private readonly options: ModelAccessOptions) {
        this.folders = options.folders.map((folder) => path.resolve(folder));
    }

    /** The app's own models folder (uploads and pulled models land there). */
    get ownFolder(): string {
        return this.folders[0]!;
    }

    /** A file the user chose themselves (a native open dialog): clients may open it from now on. */
    approve(modelPath: string): void {
        this.approved.add(path.resolve(modelPath));
    }

    /**
     * The model's real path, once it is allowed and names an existing regular file; otherwise a {@link TensorwiseError}
     * (`bad-path`, `path-not-allowed`, `not-found`) with a sentence that says what to do.
     */
    async check(modelPath: string): Promise<string> {
        if (!path.isAbsolute(modelPath))
            throw new TensorwiseError("bad-path", "The model path must be absolute (start with / or a drive letter).");
        const resolved = path.resolve(modelPath);
        // decided on the path as written first, so a refused path says nothing about whether it exists
        if (!this.allows(resolved))
            throw this.refusal();
        let real: string;
        try {
            real = await fs.realpath(resolved);
        } catch {
            throw new TensorwiseError("not-found", `There is no file at ${resolved}.`);
        }
        // a symbolic link inside a models folder must not lead outside it
        if (!this.allows(real) && !this.approved.has(resolved))
            throw this.refusal();
        const stat = await fs.stat(real);
        if (!stat.isFile())
            throw new TensorwiseError("bad-path", `${resolved} is not a file.`);
        return resolved;
    }

    private allows(candidate: string): boolean {
        if (this.options.anyPath === true || this.approved.has(candidate))
            return true;
        return this.folders.some((folder) => candidate.startsWith(folder + path.sep));
    }

    private refusal(): TensorwiseError {
        return new TensorwiseError("path-not-allowed",
            `For safety, this tensorwise opens only models inside ${this.folders.join(" or ")}. Drag the file onto the window ` +
            "instead, move it into that folder, or restart web mode with --model-dir <its folder> (or --allow-any-path).");
    }
}
