import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {makeSyntheticModel, type SyntheticModelOptions} from "../writer/makeSyntheticModel.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-test-"));

/** The per-process temp dir test models are written to. */
export function testModelDir(): string {
    return dir;
}

/** Writes a synthetic model (our own GGUF writer) into a per-process temp dir and returns its path. */
export async function makeTestModel(name: string, options: SyntheticModelOptions): Promise<string> {
    const file = path.join(dir, name + ".gguf");
    await makeSyntheticModel(file, options);
    return file;
}
