import {useState} from "react";
import {sendMessage, stopStream} from "../../../../actions/chatActions";
import {useChatStore, type LiveStream} from "../../../../stores/chatStore";
import "./Composer.css";

export function Composer({stream, disabled}: {stream: LiveStream | null; disabled: boolean}) {
    const [text, setText] = useState("");
    const options = useChatStore((state) => state.options);
    const setOptions = useChatStore((state) => state.setOptions);
    const send = () => {
        if (text.trim() === "" || stream != null || disabled)
            return;
        void sendMessage(text);
        setText("");
    };
    return (
        <div className="composer">
            <textarea className="composer-input" data-testid="composer-input" rows={3} value={text}
                placeholder={disabled ? "Load a model to start chatting" : "Message the model — Enter to send, Shift+Enter for a new line"}
                onChange={(event) => setText(event.target.value)}
                onKeyDown={(event) => {
                    if (event.key === "Enter" && !event.shiftKey) {
                        event.preventDefault();
                        send();
                    }
                }}/>
            <div className="composer-bar">
                <label className="composer-option">Max tokens
                    <input className="input" type="number" min={1} max={8192} data-testid="max-tokens" value={options.maxTokens}
                        onChange={(event) => setOptions({maxTokens: Math.max(1, Number(event.target.value) || 1)})}/>
                </label>
                <label className="composer-option">Temperature
                    <input className="input" type="number" min={0} max={2} step={0.1} data-testid="temperature" value={options.temperature}
                        onChange={(event) => setOptions({temperature: Math.max(0, Number(event.target.value) || 0)})}/>
                </label>
                <div className="composer-spacer"/>
                {stream != null
                    ? <button className="button danger" data-testid="stop" onClick={() => void stopStream(stream.streamId)}>■ Stop</button>
                    : <button className="button primary" data-testid="send" disabled={disabled || text.trim() === ""} onClick={send}>Send</button>}
            </div>
        </div>
    );
}
