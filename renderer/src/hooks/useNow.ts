import {useEffect, useState} from "react";

/**
 * `performance.now()`, read again every `intervalMs` while `active` (a countdown between the engine's events); while
 * not active, the time of the last render that was, and no timer runs.
 */
export function useNow(active: boolean, intervalMs = 250): number {
    const [now, setNow] = useState(() => performance.now());
    useEffect(() => {
        if (!active)
            return;
        setNow(performance.now());
        const timer = setInterval(() => setNow(performance.now()), intervalMs);
        return () => clearInterval(timer);
    }, [active, intervalMs]);
    return now;
}
