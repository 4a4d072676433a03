// Arm C of interleave-tg.sh, ours: PlacedModel + generateGreedy on a 1-token prompt, 32 tokens, greedy, 1 thread, CPU,
// mmap (the bench's TPOT path); prints the ms per generated token of each sample as JSON.
import {getEngineLlama} from "../../../dist/electron/engine/native/getEngineLlama.js";
import {PlacedModel} from "../../../dist/electron/engine/runtime/PlacedModel.js";
import {generateGreedy} from "../../../dist/electron/engine/runtime/generateGreedy.js";
const reps = Number(process.env.REPS ?? 5);
const engine = await getEngineLlama({gpu: "cpu", maxThreads: 1});
const placed = await PlacedModel.load(engine, {modelPath: process.env.MODEL, contextSize: 256, batchSize: 512, threads: 1, useMmap: true});
const samples = [];
for (let i = 0; i <= reps; i++) {
    const r = await generateGreedy(placed, [1], {maxTokens: 33, stopAtEog: false});
    if (i > 0) samples.push(Math.round(r.timing.tpotMs * 1000) / 1000);
}
console.log(JSON.stringify(samples));
await placed.dispose?.();
process.exit(0);
