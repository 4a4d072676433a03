import {beforeEach, describe, expect, it} from "vitest";
import {useChatStore} from "./chatStore";

const conversation = {id: "c1", title: "New chat", updatedAt: 1, messageCount: 0, messages: []};

describe("chatStore", () => {
    beforeEach(() => {
        useChatStore.setState({conversations: {c1: conversation}, streams: {}, errors: {}, activeId: "c1"});
    });

    it("accumulates batched deltas per stream, keeping the engine's count and clock", () => {
        const store = useChatStore.getState();
        store.startStream("s1", "c1");
        store.appendDelta({streamId: "s1", messageId: "m1", text: "Hello", tokens: 2, elapsedMs: 100});
        store.appendDelta({streamId: "s1", messageId: "m1", text: " world", tokens: 4, elapsedMs: 140});
        expect(useChatStore.getState().streams.s1).toMatchObject({text: "Hello world", tokens: 4, elapsedMs: 140, messageId: "m1"});
        // deltas of unknown streams (a stream of a previous page) are ignored
        store.appendDelta({streamId: "other", messageId: "x", text: "?", tokens: 1, elapsedMs: 1});
        expect(Object.keys(useChatStore.getState().streams)).toEqual(["s1"]);
    });

    it("replaces the live stream with the final message on done", () => {
        const store = useChatStore.getState();
        store.appendLocal("c1", {id: "u1", role: "user", text: "hi", createdAt: 1});
        store.startStream("s1", "c1");
        store.appendDelta({streamId: "s1", messageId: "m1", text: "Hel", tokens: 1, elapsedMs: 10});
        const timing = {promptTokens: 3, generatedTokens: 2, ttftMs: 10, tpotMs: 5, totalMs: 15};
        store.finishStream("s1", {id: "m1", role: "assistant", text: "Hello", createdAt: 2, timing});
        const state = useChatStore.getState();
        expect(state.streams).toEqual({});
        expect(state.conversations.c1?.messages.map((message) => message.text)).toEqual(["hi", "Hello"]);
        expect(state.conversations.c1?.messages[1]?.timing).toEqual(timing);
    });

    it("drops the reply being regenerated", () => {
        const store = useChatStore.getState();
        store.appendLocal("c1", {id: "u1", role: "user", text: "hi", createdAt: 1});
        store.appendLocal("c1", {id: "a1", role: "assistant", text: "old", createdAt: 2});
        store.dropLastAssistant("c1");
        expect(useChatStore.getState().conversations.c1?.messages.map((message) => message.id)).toEqual(["u1"]);
    });
});
