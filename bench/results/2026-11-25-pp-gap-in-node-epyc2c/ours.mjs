// Arm C of interleave.sh, ours: PlacedModel + generateGreedy(maxTokens 1) on 64 prompt tokens, 1 thread, CPU, mmap; prints JSON samples (ms)
import {getEngineLlama} from "../../../dist/electron/engine/native/getEngineLlama.js";
import {PlacedModel} from "../../../dist/electron/engine/runtime/PlacedModel.js";
import {generateGreedy} from "../../../dist/electron/engine/runtime/generateGreedy.js";
const reps = Number(process.env.REPS ?? 3);
const engine = await getEngineLlama({gpu: "cpu", maxThreads: 1});
const placed = await PlacedModel.load(engine, {modelPath: process.env.MODEL ?? "/tmp/tensorwise-parity-large.gguf", contextSize: 256, batchSize: 512, threads: 1, useMmap: true});
const vocab = placed.model.fileInfo.metadata.tokenizer.ggml.tokens.length;
const prompt = Array.from({length: 64}, (_, i) => (i * 7919 + 13) % vocab);
const samples = [];
for (let i = 0; i <= reps; i++) {
    const r = await generateGreedy(placed, prompt, {maxTokens: 1, stopAtEog: false});
    if (i > 0) samples.push(Math.round(r.timing.ttftMs));
}
console.log(JSON.stringify(samples));
await placed.dispose?.();
process.exit(0);
