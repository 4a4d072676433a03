/** Other programs keeping cores busy, for tests of what a busy machine does to a measurement (profiler/cpuContention.ts). */
import {spawn} from "node:child_process";

/**
 * Runs `body` while `count` busy-loop processes run (one per core keeps every core busy), and stops them after,
 * whatever `body` does. They get 300 ms to start spinning first.
 */
export async function whileCoresBusy<T>(count: number, body: () => Promise<T>): Promise<T> {
    const burners = Array.from({length: count}, () => spawn(process.execPath, ["-e", "for (;;) {}"], {stdio: "ignore"}));
    try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return await body();
    } finally {
        for (const burner of burners) burner.kill("SIGKILL");
    }
}
