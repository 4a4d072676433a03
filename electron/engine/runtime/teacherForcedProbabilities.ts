import type {Token} from "node-llama-cpp";
import type {PlacedModel} from "./PlacedModel.js";

/**
 * Next-token probability distributions along a fixed continuation ("teacher forcing"): after the prompt, and after
 * each forced token. Compares the numerics of two placements without letting one early difference derail the rest.
 */
export async function teacherForcedProbabilities(placed: PlacedModel, prompt: string, forced: readonly Token[]): Promise<Map<Token, number>[]> {
    const sequence = placed.sequence;
    await sequence.clearHistory();
    const promptTokens = placed.model.tokenize(prompt, false);
    const distributions: Map<Token, number>[] = [];
    const generator = sequence.evaluateWithMetadata(promptTokens, {probabilities: true}, {temperature: 0});
    try {
        let step = await generator.next();
        for (const token of forced) {
            if (step.done === true)
                break;
            distributions.push(step.value.probabilities);
            step = await generator.next(token);
        }
    } finally {
        await generator.return();
    }
    return distributions;
}

/** The largest absolute probability difference over all steps and tokens. */
export function maxProbabilityDifference(a: readonly Map<Token, number>[], b: readonly Map<Token, number>[]): number {
    let max = 0;
    for (let step = 0; step < Math.min(a.length, b.length); step++) {
        const left = a[step]!;
        const right = b[step]!;
        for (const token of new Set([...left.keys(), ...right.keys()]))
            max = Math.max(max, Math.abs((left.get(token) ?? 0) - (right.get(token) ?? 0)));
    }
    return max;
}
