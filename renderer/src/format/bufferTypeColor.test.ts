import {describe, expect, it} from "vitest";
import {bufferTypeColor, bufferTypeLabel} from "./bufferTypeColor";

describe("buffer type labels on the Memory screen", () => {
    it("go by the name where nothing was measured, and by what llama.cpp reported where it was", () => {
        expect(bufferTypeLabel("Vulkan0")).toBe("device memory");
        expect(bufferTypeLabel("Vulkan_Host")).toBe("pinned host memory");
        expect(bufferTypeLabel("CPU_Mapped")).toBe("host memory");
        // a CPU buffer type the name rule does not know (a future repacking one) is system RAM when the load says so
        expect(bufferTypeLabel("KLEIDI")).toBe("device memory");
        expect(bufferTypeLabel("KLEIDI", [{bufferType: "KLEIDI", isHost: true}])).toBe("host memory");
        expect(bufferTypeColor("KLEIDI", [{bufferType: "KLEIDI", isHost: true}])).toBe(bufferTypeColor("CPU"));
    });
});
