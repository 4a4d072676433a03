/** Other programs' use of the CPU while something was measured (electron/engine/profiler/cpuContention.ts measures it). */
export type CpuContention = {
    /** Cores other programs kept busy on average (0 on an idle machine; at most `cores`). */
    readonly otherCores: number;
    readonly cores: number;
    /** Threads the measured work ran on: other programs on the cores it left free cost it nothing. */
    readonly threads: number;
};
