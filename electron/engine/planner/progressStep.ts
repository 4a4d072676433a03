/** The Auto-offload steps the app shows (renderer's TaskSteps), in order. */
export type OffloadStep = "inspect" | "profile" | "plan" | "load";

/**
 * Which step a planner progress sentence belongs to: the profiler's own messages start with "profile: "
 * (electron/engine/profiler/profileMachine.ts), validation with "validating"; everything else is planning (the
 * thread-count retakes of the CPU included: they choose a setting of the plan).
 */
export function progressStep(message: string): Exclude<OffloadStep, "load"> {
    return message.startsWith("profile:") ? "profile" : message.startsWith("validating") ? "inspect" : "plan";
}

/** The sentence as the step shows it, without the profiler's prefix. */
export function progressDetail(message: string): string {
    return message.replace(/^profile: /, "");
}
