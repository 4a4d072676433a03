/** A fresh id for a stream or task (the host keys streams and progress events by it). */
export function newId(prefix: string): string {
    return `${prefix}-${crypto.randomUUID()}`;
}
