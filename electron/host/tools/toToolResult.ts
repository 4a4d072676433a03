/**
 * What an MCP server answered to a call (a CallToolResult, already checked against MCP's schema by the SDK), as the
 * conversation keeps and shows it: text, raster images of the types a browser shows safely, and a note for anything
 * else (audio, resource links, an image too large or of another type) — each capped
 * ({@link TOOL_RESULT_KEPT_CHARS}, {@link TOOL_IMAGE_MAX_CHARS}, {@link TOOL_RESULT_IMAGES}) and said to be capped.
 */
import type {CallToolResult} from "@modelcontextprotocol/sdk/types.js";
import {
    TOOL_IMAGE_MAX_CHARS, TOOL_IMAGE_TYPES, TOOL_RESULT_IMAGES, TOOL_RESULT_KEPT_CHARS, type ToolResult, type ToolResultPart
} from "../../contract/tools.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `count` characters as a person reads them ("12,345 characters"). */
function characters(count: number): string {
    return `${count.toLocaleString("en-US")} characters`;
}

/** The size of base64 `data` once decoded, in words. */
export function decodedSize(data: string): string {
    const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
    const bytes = Math.max(0, Math.floor((data.length * 3) / 4) - padding);
    return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KiB`;
}

export function toToolResult(raw: CallToolResult): ToolResult {
    const parts: ToolResultPart[] = [];
    let room = TOOL_RESULT_KEPT_CHARS;
    let total = 0;
    let images = 0;
    const addText = (text: string) => {
        total += text.length;
        if (room <= 0)
            return;
        const kept = text.slice(0, room);
        room -= kept.length;
        parts.push({type: "text", text: kept});
    };
    for (const item of raw.content) {
        if (item.type === "text")
            addText(item.text);
        else if (item.type === "image") {
            const shown = (TOOL_IMAGE_TYPES as readonly string[]).includes(item.mimeType);
            const fits = item.data.length <= TOOL_IMAGE_MAX_CHARS && BASE64.test(item.data);
            if (shown && fits && images < TOOL_RESULT_IMAGES) {
                parts.push({type: "image", mimeType: item.mimeType, data: item.data});
                images++;
            } else
                parts.push({type: "note", text: `An image (${item.mimeType.slice(0, 60)}, ${decodedSize(item.data)}) was left out: ` +
                    (!shown ? "only PNG, JPEG, GIF and WebP images are shown" : !fits ? `it is larger than ${decodedSize("x".repeat(TOOL_IMAGE_MAX_CHARS))} or not base64`
                        : `a result keeps at most ${TOOL_RESULT_IMAGES} images`) + "."});
        } else if (item.type === "audio")
            parts.push({type: "note", text: `Audio (${item.mimeType.slice(0, 60)}, ${decodedSize(item.data)}) was left out: the app plays no audio from tools.`});
        else if (item.type === "resource_link")
            parts.push({type: "note", text: `A link to the resource ${item.uri.slice(0, 500)}${item.name !== "" ? ` (${item.name.slice(0, 200)})` : ""}.`});
        else if (item.type === "resource") {
            const resource = item.resource;
            if ("text" in resource && typeof resource.text === "string")
                addText(resource.text);
            else
                parts.push({type: "note", text: `A binary resource (${resource.uri.slice(0, 500)}) was left out.`});
        }
    }
    let structured: string | null = null;
    if (raw.structuredContent != null) {
        const json = JSON.stringify(raw.structuredContent, null, 2);
        total += json.length;
        structured = json.slice(0, Math.max(0, room));
        room -= structured.length;
    }
    const capped = total > TOOL_RESULT_KEPT_CHARS ? `${characters(total)} of text, cut to ${characters(TOOL_RESULT_KEPT_CHARS)}` : null;
    return {isError: raw.isError === true, parts, structured, capped};
}
