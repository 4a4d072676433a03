import {createHash} from "node:crypto";
import {mkdtemp, mkdir, readFile, rename, rm, writeFile} from "node:fs/promises";
import {tmpdir} from "node:os";
import {dirname, join, parse, resolve} from "node:path";

const cache = new Map<string, Promise<string>>();

/**
 * Development only (tests run the TypeScript sources, which a forked `node` cannot load): transpiles `entry` and the
 * local modules it imports into a folder of the OS temp dir named after a hash of the output (so repeated runs reuse
 * one folder per version of the sources), once per process, and returns the entry's `.js` path there.
 * Uses the `typescript` dev dependency; compiled builds fork their sibling `.js` and never get here.
 */
export function transpileForChild(entry: string): Promise<string> {
    let result = cache.get(entry);
    if (result === undefined) {
        result = transpileGraph(entry);
        cache.set(entry, result);
    }
    return result;
}

async function transpileGraph(entry: string): Promise<string> {
    const ts = (await import("typescript")).default;
    const workRoot = await mkdtemp(join(tmpdir(), "tensorwise-child-tmp-"));
    await writeFile(join(workRoot, "package.json"), JSON.stringify({type: "module"}));
    const hash = createHash("sha256");

    const relativeOut = (source: string): string => source.slice(parse(source).root.length).replace(/\.ts$/, ".js");
    const pending = [entry];
    const seen = new Set(pending);
    for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
        const text = await readFile(source, "utf8");
        const {outputText} = ts.transpileModule(text, {
            fileName: source,
            compilerOptions: {module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false}
        });
        const out = join(workRoot, relativeOut(source));
        await mkdir(dirname(out), {recursive: true});
        await writeFile(out, outputText);
        hash.update(`${relativeOut(source)}\0${outputText}\0`);

        for (const {fileName} of ts.preProcessFile(text, true, true).importedFiles) {
            if (!fileName.startsWith("."))
                continue;
            const imported = resolve(dirname(source), fileName.replace(/\.js$/, ".ts"));
            if (!seen.has(imported)) {
                seen.add(imported);
                pending.push(imported);
            }
        }
    }

    const finalRoot = join(tmpdir(), `tensorwise-child-${hash.digest("hex").slice(0, 16)}`);
    try {
        await rename(workRoot, finalRoot);
    } catch {
        // Already there from an earlier run (same sources, same output): use it.
        await rm(workRoot, {recursive: true, force: true});
    }
    return join(finalRoot, relativeOut(entry));
}
