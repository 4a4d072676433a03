import {describe, expect, it} from "vitest";
import {threadCandidates} from "./profileAtThreads.js";

describe("thread counts compared for a plan", () => {
    it("doubles from 1 and ends at the allowed count, never above it", () => {
        expect(threadCandidates(1)).toEqual([1]);
        expect(threadCandidates(2)).toEqual([1, 2]);
        expect(threadCandidates(6)).toEqual([1, 2, 4, 6]);
        expect(threadCandidates(16)).toEqual([1, 2, 4, 8, 16]);
        expect(threadCandidates(0)).toEqual([1]);
    });
});
