import {useState, type Ref} from "react";
import type {ChatSettings} from "../../../../../../electron/contract/ipc";
import {saveSettings, sendMessage, stopStream} from "../../../../actions/chatActions";
import {DEFAULT_CHAT_SETTINGS, type LiveStream} from "../../../../stores/chatStore";
import "./Composer.css";

/**
 * The message box: always at the bottom of the chat, with the two settings changed most (max tokens, temperature; the
 * rest are in the settings panel) and Send, or Stop while a reply streams (Esc does the same).
 */
export function Composer({inputRef, stream, disabled, conversationId, settings, onOpenSettings}: {
    /** The message box, for the Chat screen to give it the focus. */
    inputRef?: Ref<HTMLTextAreaElement>;
    stream: LiveStream | null; disabled: boolean; conversationId: string | null; settings: ChatSettings; onOpenSettings: () => void;
}) {
    const [text, setText] = useState("");
    const maxTokens = settings.maxTokens ?? DEFAULT_CHAT_SETTINGS.maxTokens;
    const temperature = settings.temperature ?? DEFAULT_CHAT_SETTINGS.temperature;
    const send = () => {
        if (text.trim() === "" || stream != null || disabled)
            return;
        void sendMessage(text);
        setText("");
    };
    return (
        <div className="composer" data-testid="composer">
            <textarea ref={inputRef} className="composer-input" data-testid="composer-input" rows={3} value={text}
                placeholder={disabled ? "Load a model to start chatting" : "Message the model — Enter to send, Shift+Enter for a new line, Esc to stop"}
                onChange={(event) => setText(event.target.value)}
                onKeyDown={(event) => {
                    if (event.key === "Enter" && !event.shiftKey) {
                        event.preventDefault();
                        send();
                    }
                }}/>
            <div className="composer-bar">
                <label className="composer-option">Max tokens
                    <input className="input" type="number" min={1} max={8192} data-testid="max-tokens" value={maxTokens}
                        onChange={(event) => void saveSettings(conversationId, {...settings, maxTokens: Math.max(1, Math.round(Number(event.target.value)) || 1)})}/>
                </label>
                <label className="composer-option">Temperature
                    <input className="input" type="number" min={0} max={2} step={0.1} data-testid="temperature" value={temperature}
                        onChange={(event) => void saveSettings(conversationId, {...settings, temperature: Math.max(0, Number(event.target.value) || 0)})}/>
                </label>
                <button className="button ghost small" data-testid="open-chat-settings" onClick={onOpenSettings}
                    title="System prompt, top-k, top-p, min-p, repeat penalty, seed, stop strings">
                    {settings.systemPrompt != null ? "Settings · system prompt set" : "More settings"}
                </button>
                {(settings.tools?.on.length ?? 0) > 0 && (
                    <button className="button ghost small" data-testid="composer-tools" onClick={onOpenSettings}
                        title="The MCP tools this chat offers the model (each call waits for your approval)">
                        Tools · {settings.tools!.on.length} on{settings.tools!.choice !== "auto" ? ` · ${settings.tools!.choice}` : ""}
                    </button>
                )}
                <div className="composer-spacer"/>
                {stream != null
                    ? <button className="button" data-testid="stop" disabled={stream.stopping} title="Stop the reply (Esc)"
                        onClick={() => void stopStream(stream.streamId)}>■ {stream.stopping ? "Stopping…" : "Stop"}</button>
                    : <button className="button primary" data-testid="send" disabled={disabled || text.trim() === ""} onClick={send}>Send</button>}
            </div>
        </div>
    );
}
