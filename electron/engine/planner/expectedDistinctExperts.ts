/**
 * How many distinct experts a micro-batch touches, under uniform routing: each of `tokens` tokens picks `used` of
 * `count` experts, every expert equally likely and tokens independent. An expert is missed by one token with
 * probability 1 − used/count, by all of them with (1 − used/count)^tokens, so the expected number touched is
 * count · (1 − (1 − used/count)^tokens). Real routers are not uniform (some experts are popular, tokens of one prompt
 * agree), which makes fewer distinct experts: this is an upper bound on what llama.cpp copies for an offloaded
 * host-resident MUL_MAT_ID ("copying only the experts that are used", ggml_backend_sched_compute_splits).
 */
export function expectedDistinctExperts(count: number, used: number, tokens: number): number {
    if (count <= 0 || used <= 0 || tokens <= 0) return 0;
    if (used >= count) return count;
    return count * (1 - Math.pow(1 - used / count, tokens));
}
