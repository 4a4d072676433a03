/** A model hub request that failed, with one sentence a user can act on (the CLI prints `message` alone). */
export class HubError extends Error {
    constructor(message: string, readonly status?: number) {
        super(message);
        this.name = "HubError";
    }
}
