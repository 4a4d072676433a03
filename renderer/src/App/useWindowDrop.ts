import {useEffect} from "react";
import {openModelFile} from "../actions/modelActions";
import {useUiStore} from "../stores/uiStore";

/** The whole window is a drop zone for .gguf files. */
export function useWindowDrop(): void {
    useEffect(() => {
        let depth = 0;
        const hasFiles = (event: DragEvent) => event.dataTransfer?.types.includes("Files") === true;
        const onEnter = (event: DragEvent) => {
            if (!hasFiles(event))
                return;
            event.preventDefault();
            depth++;
            useUiStore.getState().setDragging(true);
        };
        const onOver = (event: DragEvent) => {
            if (hasFiles(event)) {
                event.preventDefault();
                event.dataTransfer!.dropEffect = "copy";
            }
        };
        const onLeave = () => {
            depth = Math.max(0, depth - 1);
            if (depth === 0)
                useUiStore.getState().setDragging(false);
        };
        const onDrop = (event: DragEvent) => {
            event.preventDefault();
            depth = 0;
            useUiStore.getState().setDragging(false);
            const file = event.dataTransfer?.files[0];
            if (file != null)
                void openModelFile(file);
        };
        window.addEventListener("dragenter", onEnter);
        window.addEventListener("dragover", onOver);
        window.addEventListener("dragleave", onLeave);
        window.addEventListener("drop", onDrop);
        return () => {
            window.removeEventListener("dragenter", onEnter);
            window.removeEventListener("dragover", onOver);
            window.removeEventListener("dragleave", onLeave);
            window.removeEventListener("drop", onDrop);
        };
    }, []);
}
