import {existsSync, readFileSync} from "node:fs";
import path from "node:path";
import type {EngineLlama} from "../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {makeTestModel} from "../../engine/testing/testModels.js";

/** Real models' chat templates, as `npm ci` unpacks them with llama.cpp's source (native/install.mjs). */
export const CHAT_TEMPLATES = path.resolve("build/native/llama.cpp/models/templates");

/** The text of one of {@link CHAT_TEMPLATES}. */
export function chatTemplate(file: string): string {
    return readFileSync(path.join(CHAT_TEMPLATES, file), "utf8");
}

/** Why tests needing `files` must skip (one is missing), or `null`. */
export function missingTemplates(files: readonly string[]): string | null {
    const missing = files.find((file) => !existsSync(path.join(CHAT_TEMPLATES, file)));
    return missing != null ? `${path.join(CHAT_TEMPLATES, missing)} is missing (npm ci unpacks llama.cpp's source: native/install.mjs)` : null;
}

/** The generated "tiny" model carrying `template` as its chat template, loaded on the CPU. */
export async function loadTemplatedTestModel(engine: EngineLlama, name: string, template: string): Promise<PlacedModel> {
    // no "▁" after special tokens: the tool-call grammar starts with the generation prompt exactly as the template writes it
    const modelPath = await makeTestModel(name, {preset: "tiny", type: "q8_0", chatTemplate: template, addSpacePrefix: false});
    return await PlacedModel.load(engine, {modelPath, contextSize: 2048, threads: 1, sequences: 1});
}
