/** A model hub request that failed, with one sentence a user can act on (the CLI prints `message` alone). */
export class HubError extends Error {
    /** The contract's error code (errorCodes.ts), so the message crosses the engine → host → renderer boundary as is. */
    readonly code = "hub-error";

    constructor(message: string, readonly status?: number) {
        super(message);
        this.name = "HubError";
    }
}
