// The synthetic models the parity and prediction benchmarks run on, written with the project's own GGUF writer
// (`tensorwise make-model`): one definition for bench/drivers/bench-parity.mjs and bench/drivers/bench-predictions.mjs.
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

/** Model name → label and `make-model` arguments. */
export const MODELS = {
    small: {label: "≈100 MiB F16 (3 layers, embd 1024)", args: ["--layers", "3", "--embd", "1024", "--ff", "2816", "--heads", "16", "--kv-heads", "16", "--vocab", "8000", "--type", "f16"]},
    // every output row its own (F32 at 4096 × 256 is the writer's weight pool, syntheticTensorData.ts): no two tokens tie, so
    // a batch and a single token pick the same one, and the model's own weights as its draft agree with it
    tiefree: {label: "≈40 MiB F32 without tied tokens (8 layers, embd 256)", args: ["--layers", "8", "--embd", "256", "--ff", "768", "--heads", "8", "--kv-heads", "2", "--vocab", "4096", "--type", "f32"]},
    large: {label: "≈1 GiB Q8_0 (16 layers, embd 2048, ff 8192)", args: ["--layers", "16", "--embd", "2048", "--ff", "8192", "--heads", "16", "--kv-heads", "16", "--vocab", "32000", "--type", "q8_0"]}
};

/** Runs the tensorwise CLI of this checkout synchronously. */
export const tensorwise = (args, env = {}) => spawnSync(process.execPath, [path.join(root, "bin", "tensorwise.mjs"), ...args],
    {encoding: "utf8", env: {...process.env, ...env}, maxBuffer: 64 << 20});

/** The model's file in the temp folder, written on first use. */
export function modelFile(name) {
    const model = MODELS[name];
    if (model == null) throw new Error(`unknown model ${name} (use ${Object.keys(MODELS).join(", ")})`);
    const file = path.join(os.tmpdir(), `tensorwise-parity-${name}.gguf`);
    if (!fs.existsSync(file)) {
        const made = tensorwise(["make-model", file, ...model.args]);
        if (made.status !== 0) throw new Error(`make-model failed: ${made.stderr}`);
    }
    return file;
}

/** Median of a non-empty list. */
export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
