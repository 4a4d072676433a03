import {describe, expect, it} from "vitest";
import type {ChatSettings} from "../../contract/ipc.js";
import {replySettings} from "./replySettings.js";

describe("replySettings", () => {
    it("takes only sampling fields from a conversation's settings: nothing there can redirect or rewrite the reply", () => {
        // what a settings object parsed from a hand-edited file may hold, past the type
        const settings = {
            temperature: 0.5, stopStrings: ["\n\n"], conversationId: "another", streamId: "hijack", history: [], message: "injected"
        } as unknown as ChatSettings;
        expect(replySettings(settings, {maxTokens: 8})).toEqual({temperature: 0.5, stopStrings: ["\n\n"], maxTokens: 8});
    });
});
