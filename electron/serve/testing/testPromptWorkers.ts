import type {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import type {ChatMessage, ToolUse} from "../common/GenerationRequest.js";
import type {NativeReasoning} from "../generation/chatLayer/chatReasoning.js";
import {toolCallPrompt, type ToolCallPrompt} from "../generation/chatLayer/toolCallPrompt.js";
import {PromptWorker} from "../generation/promptWorker/PromptWorker.js";

/** One prompt worker per loaded test model (each counts with its own vocabulary), closed together. */
export class TestPromptWorkers {
    private readonly workers = new Map<string, PromptWorker>();

    for(placed: PlacedModel): PromptWorker {
        let worker = this.workers.get(placed.options.modelPath);
        if (worker == null) {
            worker = new PromptWorker(placed.options.modelPath);
            this.workers.set(placed.options.modelPath, worker);
        }
        return worker;
    }

    /** toolCallPrompt on `placed` through its worker, with no context bound. */
    prompt(placed: PlacedModel, messages: readonly ChatMessage[], tools: ToolUse | null, reasoning: NativeReasoning, streamed = false): Promise<ToolCallPrompt> {
        return toolCallPrompt(messages, tools, {model: placed.model, bindings: placed.engine.bindings, worker: this.for(placed), refuseOverlong: () => {}},
            reasoning, streamed);
    }

    async close(): Promise<void> {
        await Promise.all([...this.workers.values()].map((worker) => worker.close()));
        this.workers.clear();
    }
}
