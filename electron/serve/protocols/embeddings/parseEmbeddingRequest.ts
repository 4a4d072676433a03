/**
 * A `/v1/embeddings` body checked field by field: `input` as one string, a list of strings, one list of token ids or a
 * list of them; `encoding_format` float or base64; `dimensions` only when it is the model's own size (this server
 * cannot shorten a vector); `user` accepted (a label; nothing is kept). Anything else is refused by name.
 */
import {checkLimit, TEXT_LIMITS} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";

/** One input: text, or token ids of the model's vocabulary. */
export type EmbeddingInput = {kind: "text"; text: string} | {kind: "tokens"; tokens: number[]};

export type EmbeddingRequest = {
    model: string | null;
    inputs: EmbeddingInput[];
    encodingFormat: "float" | "base64";
};

const KNOWN_FIELDS = new Set(["input", "model", "encoding_format", "dimensions", "user"]);

/** `body` as an embedding request for a model of `vectorSize` dimensions and `vocabularySize` tokens. */
export function parseEmbeddingRequest(body: unknown, model: {vectorSize: number; vocabularySize: number}): EmbeddingRequest {
    if (typeof body !== "object" || body == null || Array.isArray(body))
        throw OpenAiError.badRequest("The request body must be a JSON object.");
    const object = body as Record<string, unknown>;
    const unknown = Object.keys(object).find((key) => !KNOWN_FIELDS.has(key));
    if (unknown != null)
        throw OpenAiError.badRequest(`\`${unknown.slice(0, 40)}\` is not a field of an embeddings request this server knows: send the request without it.`, unknown.slice(0, 40));
    const {model: name, encoding_format: format, dimensions, user} = object;
    if (name != null && (typeof name !== "string" || name.length > TEXT_LIMITS.path))
        throw OpenAiError.badRequest("`model` must be a string.", "model");
    if (format != null && format !== "float" && format !== "base64")
        throw OpenAiError.badRequest(`\`encoding_format\` must be "float" or "base64" (got ${JSON.stringify(String(format).slice(0, 20))}).`, "encoding_format");
    if (dimensions != null && dimensions !== model.vectorSize)
        throw OpenAiError.badRequest(`\`dimensions\` must be ${model.vectorSize}, this model's embedding size: this server cannot shorten its vectors (got ${JSON.stringify(dimensions).slice(0, 20)}).`,
            "dimensions");
    if (user != null && (typeof user !== "string" || user.length > TEXT_LIMITS.id))
        throw OpenAiError.badRequest(`\`user\` must be a string of at most ${TEXT_LIMITS.id} characters.`, "user");
    return {model: typeof name === "string" ? name : null, inputs: parseInputs(object.input, model.vocabularySize), encodingFormat: format === "base64" ? "base64" : "float"};
}

function parseInputs(input: unknown, vocabularySize: number): EmbeddingInput[] {
    if (typeof input === "string")
        return [textInput(input, "input")];
    if (!Array.isArray(input) || input.length === 0)
        throw OpenAiError.badRequest("`input` must be a non-empty string, a list of them, a list of token ids, or a list of such lists.", "input");
    // one list of token ids is one input (as OpenAI reads it)
    if (input.every((item) => typeof item === "number"))
        return [tokenInput(input, "input", vocabularySize)];
    const count = checkLimit("embeddingInputs", input.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`input\`: ${count.message}`, "input");
    return input.map((item: unknown, index) => {
        const param = `input[${index}]`;
        if (typeof item === "string")
            return textInput(item, param);
        if (Array.isArray(item))
            return tokenInput(item, param, vocabularySize);
        throw OpenAiError.badRequest(`${param} must be a string or a list of token ids.`, param);
    });
}

/** How a message names the field: `input` in backticks, an element (`input[2]`) as it is. */
function shown(param: string): string {
    return param === "input" ? "`input`" : param;
}

function textInput(text: string, param: string): EmbeddingInput {
    if (text === "")
        throw OpenAiError.badRequest(`${shown(param)} is empty: an empty text has no embedding.`, param);
    if (text.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${shown(param)} is longer than ${TEXT_LIMITS.message} characters.`, param);
    return {kind: "text", text};
}

function tokenInput(list: unknown[], param: string, vocabularySize: number): EmbeddingInput {
    if (list.length === 0)
        throw OpenAiError.badRequest(`${shown(param)} is an empty list of token ids: it has no embedding.`, param);
    const bad = list.findIndex((token) => typeof token !== "number" || !Number.isInteger(token) || token < 0 || token >= vocabularySize);
    if (bad >= 0)
        throw OpenAiError.badRequest(`${shown(param)}[${bad}] must be a token id, an integer from 0 to ${vocabularySize - 1} (got ${JSON.stringify(list[bad])?.slice(0, 30)}).`, param);
    return {kind: "tokens", tokens: list as number[]};
}
