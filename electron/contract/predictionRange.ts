/** A prediction's range, as the app and the CLI show it ("about 1.2–1.5 s"). A leaf: imports nothing. */

export type PredictionRangeView = {
    /** The prediction, corrected by the model's own measured replies where there are enough. */
    readonly centerMs: number;
    readonly lowMs: number;
    readonly highMs: number;
    /** `measured`: from this machine's own prediction errors; `assumed`: before enough of them. */
    readonly basis: "measured" | "assumed";
    /** Measurements the range comes from (0 when assumed). */
    readonly samples: number;
    /** The model's measured ÷ predicted that moved the center, over how many replies; `null`: none yet. */
    readonly correction: {readonly factor: number; readonly samples: number} | null;
};
