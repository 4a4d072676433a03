/**
 * Why a grammar, a JSON schema or a tools list is not handed to llama.cpp: `code` says which kind of reason (a 400's
 * `code`), the message what is wrong, written to follow the name of the field it came in ("`grammar`: " + message).
 */
import {OpenAiError} from "../common/OpenAiError.js";

export type GrammarRefusalCode =
    /** Past one of STRUCTURE_LIMITS (electron/contract/limits.ts). */
    | "grammar_limit"
    /** Nothing, or nothing from some point on, could follow it: a reply would have no way forward. */
    | "grammar_unsatisfiable"
    /** llama.cpp's parser (or its JSON schema converter) would refuse it. */
    | "grammar_syntax";

export class GrammarRefusal extends Error {
    /** `field`: the request field it came in, where the refusal knows it better than its caller (one tool of several). */
    constructor(readonly code: GrammarRefusalCode, message: string, readonly field?: string) {
        super(message);
    }

    /** The 400 for this refusal of what came in `field` (or in its own {@link GrammarRefusal.field}). */
    toBadRequest(field: string): OpenAiError {
        const named = this.field ?? field;
        return OpenAiError.badRequest(`\`${named}\`: ${this.message}`, named, this.code);
    }
}

/** `work()`, with a GrammarRefusal it throws answered as the 400 naming `field`. */
export function refusingAs400<T>(field: string, work: () => T): T {
    try {
        return work();
    } catch (error) {
        throw error instanceof GrammarRefusal ? error.toBadRequest(field) : error;
    }
}
