import {useState} from "react";
import type {ChatSettings} from "../../../../../../electron/contract/ipc";
import {saveSettings} from "../../../../actions/chatActions";
import {
    CONTEXT_OVERFLOW_LABELS, CONTEXT_OVERFLOW_POLICIES, DEFAULT_CONTEXT_OVERFLOW, isContextOverflowPolicy
} from "../../../../../../electron/contract/contextOverflow";
import {ChatToolsSettings} from "../ChatToolsSettings/ChatToolsSettings";
import "./ChatSettingsPanel.css";

type NumberField = {key: "maxTokens" | "temperature" | "topK" | "topP" | "minP" | "repeatPenalty" | "seed"; label: string; step: number; hint: string};

/** Stop strings a conversation keeps (the host's bounds table allows this many). */
const MAX_STOP_STRINGS = 16;

/** The sampling settings a user can set, with llama.cpp's meaning in one line each. */
const NUMBER_FIELDS: NumberField[] = [
    {key: "maxTokens", label: "Max tokens", step: 1, hint: "the reply stops after this many tokens"},
    {key: "temperature", label: "Temperature", step: 0.05, hint: "0 always picks the likeliest token"},
    {key: "topK", label: "Top-k", step: 1, hint: "sample among the k likeliest tokens; 0 turns it off"},
    {key: "topP", label: "Top-p", step: 0.01, hint: "sample among the likeliest tokens holding this probability"},
    {key: "minP", label: "Min-p", step: 0.01, hint: "drop tokens less likely than this × the likeliest"},
    {key: "repeatPenalty", label: "Repeat penalty", step: 0.05, hint: "above 1 discourages repeating recent tokens"},
    {key: "seed", label: "Seed", step: 1, hint: "the same seed and settings give the same reply"}
];

/**
 * A conversation's system prompt and sampling settings, kept with the conversation (empty fields use the engine's
 * defaults). Text fields save when they lose focus, numbers as they are typed; the host checks every value against
 * its bounds table and a refusal is shown here in its words, the previous settings kept. Mount it with
 * `key={conversationId}` so another conversation starts from its own settings.
 */
export function ChatSettingsPanel({conversationId, settings, onClose}: {conversationId: string | null; settings: ChatSettings; onClose: () => void}) {
    const [systemPrompt, setSystemPrompt] = useState(settings.systemPrompt ?? "");
    const [stopStrings, setStopStrings] = useState((settings.stopStrings ?? []).join("\n"));
    const [draft, setDraft] = useState<Record<string, string>>({});
    const [refused, setRefused] = useState<string | null>(null);
    const save = (change: Partial<ChatSettings>) => {
        const next: ChatSettings = {...settings, ...change};
        for (const key of Object.keys(next) as (keyof ChatSettings)[])
            if (next[key] == null)
                delete next[key];
        void saveSettings(conversationId, next).then(setRefused);
    };
    return (
        <aside className="chat-settings" data-testid="chat-settings" aria-label="Conversation settings">
            <div className="chat-settings-head">
                <h2>Settings</h2>
                <button className="button ghost small" data-testid="chat-settings-close" onClick={onClose} aria-label="Close settings">✕</button>
            </div>
            <p className="faint chat-settings-note">{conversationId == null ? "For the next new chat." : "Kept with this conversation; used from the next reply."}</p>
            <label className="chat-settings-field">
                <span>System prompt</span>
                <textarea className="chat-settings-text" data-testid="system-prompt" rows={5} value={systemPrompt}
                    placeholder="e.g. You are a concise assistant."
                    onChange={(event) => setSystemPrompt(event.target.value)}
                    onBlur={() => save({systemPrompt: systemPrompt === "" ? undefined : systemPrompt})}/>
            </label>
            <label className="chat-settings-field" title="The conversation is kept whole; this decides what the model sees of it once it no longer fits in the loaded context">
                <span>When the context is full</span>
                <select className="input" data-testid="setting-contextOverflow" value={settings.contextOverflow ?? DEFAULT_CONTEXT_OVERFLOW}
                    onChange={(event) => {
                        if (isContextOverflowPolicy(event.target.value))
                            save({contextOverflow: event.target.value});
                    }}>
                    {CONTEXT_OVERFLOW_POLICIES.map((policy) => <option key={policy} value={policy}>{CONTEXT_OVERFLOW_LABELS[policy]}</option>)}
                </select>
            </label>
            {NUMBER_FIELDS.map((field) => (
                <label className="chat-settings-field" key={field.key} title={field.hint}>
                    <span>{field.label}</span>
                    <input className="input" type="number" data-testid={`setting-${field.key}`} step={field.step} placeholder="default"
                        value={draft[field.key] ?? (settings[field.key] != null ? String(settings[field.key]) : "")}
                        onChange={(event) => {
                            const text = event.target.value;
                            setDraft({...draft, [field.key]: text});
                            const number = Number(text);
                            if (text === "")
                                save({[field.key]: undefined});
                            else if (Number.isFinite(number))
                                save({[field.key]: number});
                        }}/>
                </label>
            ))}
            <label className="chat-settings-field">
                <span>Stop strings <small className="faint">one per line</small></span>
                <textarea className="chat-settings-text" data-testid="stop-strings" rows={3} value={stopStrings}
                    onChange={(event) => setStopStrings(event.target.value)}
                    onBlur={() => {
                        const list = stopStrings.split("\n").filter((line) => line !== "").slice(0, MAX_STOP_STRINGS);
                        save({stopStrings: list.length === 0 ? undefined : list});
                    }}/>
            </label>
            <ChatToolsSettings tools={settings.tools} onChange={(tools) => save({tools})}/>
            {refused != null && <div className="error-box chat-settings-error" data-testid="settings-error">{refused}</div>}
        </aside>
    );
}
