/**
 * The CPU side of a machine profile at another thread count, for choosing the fastest count: only what threads change
 * is retaken (CPU matmuls and expert matmuls, attention, CPU read bandwidth and graph launch, the per-decode costs); GPU
 * points, expert copies and transfers stay.
 */
import type {EngineLlama} from "../native/getEngineLlama.js";
import {busier, withContention} from "./cpuContention.js";
import type {MachineProfile} from "./MachineProfile.js";
import {profileMachine, type ProfileMachineOptions} from "./profileMachine.js";

/** The CPU backend's device name in ggml. */
const CPU_DEVICE = "CPU";

/**
 * Thread counts worth comparing: 1, 2, 4, … and `maxThreads` itself, never more. ggml's CPU threads spin-wait at every
 * barrier, so more threads than free cores slows decode many times over (ggml_barrier in ggml/src/ggml-cpu/ggml-cpu.c); fewer can be faster on a busy
 * machine, which only a measurement shows.
 */
export function threadCandidates(maxThreads: number): number[] {
    const max = Math.max(1, Math.floor(maxThreads));
    const candidates: number[] = [];
    for (let t = 1; t < max; t *= 2) candidates.push(t);
    candidates.push(max);
    return candidates;
}

/**
 * `base` with its CPU measurements retaken at `threads` (cached like any profile, under its own key). A profile already
 * at `threads` is returned as it is.
 */
export async function profileAtThreads(engine: EngineLlama, base: MachineProfile, threads: number,
    options: Omit<ProfileMachineOptions, "threads" | "devices"> = {}): Promise<MachineProfile> {
    if (base.threads === threads) return base;
    const cpu = await profileMachine(engine, base.operators, {...options, threads, devices: [CPU_DEVICE]});
    return {
        ...base,
        key: `${base.key}+cpu:${cpu.key}`,
        threads,
        matmuls: [...cpu.matmuls, ...base.matmuls.filter((m) => m.device !== CPU_DEVICE)],
        // the CPU's expert matmuls at this thread count (a MoE decode is mostly these); kept from `base` they priced
        // every count at base's, and the plan chose 1 thread for mixtral-mini at 1.8× the 2-thread decode time
        ...(base.expertMatmuls != null || cpu.expertMatmuls != null
            ? {expertMatmuls: [...(cpu.expertMatmuls ?? []), ...(base.expertMatmuls ?? []).filter((m) => m.device !== CPU_DEVICE)]} : {}),
        ...(base.attentions != null || cpu.attentions != null
            ? {attentions: [...(cpu.attentions ?? []), ...(base.attentions ?? []).filter((a) => a.device !== CPU_DEVICE)]} : {}),
        cpuReadBytesPerSec: cpu.cpuReadBytesPerSec,
        ...(cpu.cpuLaunchUs != null ? {cpuLaunchUs: cpu.cpuLaunchUs} : {}),
        ...(cpu.decodeOverheadUs != null ? {decodeOverheadUs: cpu.decodeOverheadUs, decodePerLayerUs: cpu.decodePerLayerUs} : {}),
        elapsedMs: base.elapsedMs + cpu.elapsedMs,
        truncated: base.truncated || cpu.truncated,
        // the GPU's timings are base's, the CPU's this retake's: whichever measurement other programs disturbed more
        ...withContention(busier(base.cpuContention, cpu.cpuContention))
    };
}
