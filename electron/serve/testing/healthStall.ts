import {rawRequest} from "../../engine/testing/rawRequest.js";

/**
 * Runs `work` while `GET /health` is asked of the server on `port` again and again (one at a time, `intervalMs`
 * apart): the longest a probe waited for its answer is how long the server's thread stalled during the work (at most
 * one probe interval less). Run it once with harmless work for the machine's own noise (the control).
 */
export async function healthStallDuring<T>(port: number, work: () => Promise<T>, intervalMs = 10): Promise<{result: T; worstMs: number; probes: number}> {
    let done = false;
    let worstMs = 0;
    let probes = 0;
    const probing = (async () => {
        while (!done) {
            const started = performance.now();
            const answer = await rawRequest(port, {method: "GET", path: "/health"});
            if (answer.status !== 200)
                throw new Error(`/health answered ${answer.status}`);
            worstMs = Math.max(worstMs, performance.now() - started);
            probes++;
            await new Promise((resolve) => setTimeout(resolve, intervalMs));
        }
    })();
    let result: T;
    try {
        result = await work();
    } finally {
        done = true;
        await probing;
    }
    return {result, worstMs, probes};
}
