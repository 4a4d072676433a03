import {existsSync, readFileSync} from "node:fs";
import path from "node:path";
import type {EngineLlama} from "../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {makeTestModel} from "../../engine/testing/testModels.js";

/** Real models' chat templates, as `npm ci` unpacks them with llama.cpp's source (native/install.mjs). */
export const CHAT_TEMPLATES = path.resolve("build/native/llama.cpp/models/templates");

/** The files of {@link CHAT_TEMPLATES} the serve tests use: one name per family, for every test that templates with it. */
export const TEMPLATE_FILES = {
    qwen25: "Qwen-Qwen2.5-7B-Instruct.jinja",
    qwen3: "Qwen-Qwen3-0.6B.jinja",
    deepseekR1: "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
    hermes3: "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
    llama32: "meta-llama-Llama-3.2-3B-Instruct.jinja"
} as const;

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
