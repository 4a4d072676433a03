/**
 * How often a speculator's draft tokens are accepted (α), measured on the user's own replies and kept per (model,
 * speculator) pair in a JSON file beside the machine profiles; before any reply measured it, an assumed α per kind.
 * α is estimated from the counts as contract/speculative.ts's acceptanceRate says.
 */
import fs from "node:fs";
import path from "node:path";
import {fileIdentity} from "../cache/fileIdentity.js";
import {writeCacheFile} from "../cache/writeCacheFile.js";
import {acceptanceRate, rejectionsOf, type SpeculativeKind} from "../../contract/speculative.js";

/**
 * α assumed before any reply measured it: n-gram lookup finds drafts only where the reply repeats what came before
 * (code, quoting a document) and is often wrong elsewhere; a draft model of the same family agrees on most easy
 * tokens; a model's own MTP head was trained for it. Conservative: a plan that speculates on them must win anyway.
 */
export const ASSUMED_ACCEPTANCE: Readonly<Record<SpeculativeKind, number>> = {ngram: 0.3, draft: 0.5, mtp: 0.6};

/**
 * Share of the model's steps that had a draft to verify, assumed before any reply measured it: a draft model and an
 * MTP head draft at every step; n-gram lookup only where the last tokens occurred before.
 */
export const ASSUMED_COVERAGE: Readonly<Record<SpeculativeKind, number>> = {ngram: 0.3, draft: 1, mtp: 1};

/** Fewest draft tokens measured before the measured α replaces the assumed one. */
export const MIN_MEASURED_TOKENS = 32;

/**
 * What replies measured for one (model, speculator) pair: draft tokens accepted, rejections, drafted; the model's
 * steps with a draft, and all its steps.
 */
export type AcceptanceRecord = {
    readonly accepted: number; readonly rejections: number; readonly drafted: number;
    readonly draftSteps: number; readonly modelSteps: number; readonly updatedAt: string;
};

/**
 * One reply's counts (the native loop's): steps that verified a draft, those that kept it whole, tokens drafted and
 * kept, and the tokens the reply generated (each of the model's steps yields one plus the draft tokens it accepted).
 */
export type AcceptanceSample = {
    readonly steps: number; readonly fullyAccepted: number; readonly drafted: number; readonly accepted: number; readonly generated: number;
};

/**
 * What a plan prices with, and where it comes from: α; the share of the model's steps that have a draft to verify
 * (`coverage`); the draft tokens measured so far.
 */
export type Acceptance = {readonly alpha: number; readonly coverage: number; readonly source: "measured" | "assumed"; readonly drafted: number};

const FILE_VERSION = 2;
type AcceptanceFile = {version: number; pairs: Record<string, AcceptanceRecord>};

/** The key of a (model, speculator) pair: the files by path, size and time, and the kind. */
export function acceptanceKey(modelPath: string, kind: SpeculativeKind, draftPath?: string): string {
    return [kind, fileIdentity(modelPath), ...(draftPath != null ? [fileIdentity(draftPath)] : [])].join("|");
}

/** The α and coverage measured for `key` in `dir`, else the kind's assumed ones. */
export function readAcceptance(dir: string, key: string, kind: SpeculativeKind): Acceptance {
    const record = readFile(dir).pairs[key];
    const alpha = record != null && record.drafted >= MIN_MEASURED_TOKENS ? acceptanceRate(record) : null;
    if (record == null || alpha == null)
        return {alpha: ASSUMED_ACCEPTANCE[kind], coverage: ASSUMED_COVERAGE[kind], source: "assumed", drafted: record?.drafted ?? 0};
    return {alpha, coverage: record.modelSteps > 0 ? Math.min(1, record.draftSteps / record.modelSteps) : ASSUMED_COVERAGE[kind],
        source: "measured", drafted: record.drafted};
}

/** The model's steps in a reply: each yielded one token and the draft tokens it accepted. */
export function modelStepsOf(sample: Pick<AcceptanceSample, "generated" | "accepted">): number {
    return Math.max(0, sample.generated - sample.accepted);
}

/** Adds one reply's counts to `key`'s record in `dir`. */
export async function recordAcceptance(dir: string, key: string, sample: AcceptanceSample): Promise<void> {
    if (sample.drafted <= 0) return;
    const file = readFile(dir);
    const before = file.pairs[key] ?? {accepted: 0, rejections: 0, drafted: 0, draftSteps: 0, modelSteps: 0, updatedAt: ""};
    file.pairs[key] = {
        accepted: before.accepted + sample.accepted,
        rejections: before.rejections + rejectionsOf(sample),
        drafted: before.drafted + sample.drafted,
        draftSteps: before.draftSteps + sample.steps,
        modelSteps: before.modelSteps + Math.max(sample.steps, modelStepsOf(sample)),
        updatedAt: new Date().toISOString()
    };
    await writeCacheFile(path.join(dir, ACCEPTANCE_FILE), `${JSON.stringify(file, null, 2)}\n`);
}

/** The file's name in the cache folder. */
export const ACCEPTANCE_FILE = "speculative-acceptance.json";

/** The store, or an empty one where it is missing or not one this code wrote (it only ever holds measurements). */
function readFile(dir: string): AcceptanceFile {
    try {
        const parsed = JSON.parse(fs.readFileSync(path.join(dir, ACCEPTANCE_FILE), "utf8")) as Partial<AcceptanceFile>;
        if (parsed.version !== FILE_VERSION || parsed.pairs == null || typeof parsed.pairs !== "object" || Array.isArray(parsed.pairs))
            return {version: FILE_VERSION, pairs: {}};
        const pairs: Record<string, AcceptanceRecord> = Object.create(null) as Record<string, AcceptanceRecord>;
        for (const [key, value] of Object.entries(parsed.pairs)) {
            const r = value as Partial<AcceptanceRecord>;
            const counts = [r.accepted, r.rejections, r.drafted, r.draftSteps, r.modelSteps];
            if (counts.every((n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0) && typeof r.updatedAt === "string")
                pairs[key] = r as AcceptanceRecord;
        }
        return {version: FILE_VERSION, pairs};
    } catch {
        return {version: FILE_VERSION, pairs: {}};
    }
}
