import type {McpServerConfig, ToolDecision, ToolServersState} from "../../../electron/contract/ipc";
import {useChatStore} from "../stores/chatStore";
import {useToolsStore} from "../stores/toolsStore";
import {errorMessage} from "../transport/Transport";
import {getTransport} from "../transport/getTransport";

/** Loads the MCP servers' state into their store; a refused or failed request is shown as the store's error. */
export async function refreshTools(): Promise<void> {
    const store = useToolsStore.getState();
    try {
        store.setState(await getTransport().request("tools.list"));
        store.setError(null);
    } catch (error) {
        store.setError(errorMessage(error));
    }
}

/** Runs a change of the servers; a refused one leaves them as they were and shows why. Resolves with whether it was accepted. */
async function change(request: () => Promise<ToolServersState>): Promise<boolean> {
    const store = useToolsStore.getState();
    try {
        store.setState(await request());
        store.setError(null);
        return true;
    } catch (error) {
        store.setError(errorMessage(error));
        return false;
    }
}

export function saveServer(config: McpServerConfig, replaces?: string): Promise<boolean> {
    return change(() => getTransport().request("tools.save", {config, ...(replaces != null && {replaces})}));
}

export function removeServer(name: string): Promise<boolean> {
    return change(() => getTransport().request("tools.remove", {name}));
}

export function startServer(name: string): Promise<boolean> {
    return change(() => getTransport().request("tools.start", {name}));
}

export function stopServer(name: string): Promise<boolean> {
    return change(() => getTransport().request("tools.stop", {name}));
}

/** Imports an `mcpServers` JSON; resolves with the names added (none when refused: the store's error says why). */
export async function importServers(text: string): Promise<string[]> {
    let added: string[] = [];
    await change(async () => {
        const answer = await getTransport().request("tools.import", {text});
        added = answer.added;
        return answer.state;
    });
    return added;
}

/** Answers a tool call waiting in reply `streamId`; a refusal is shown as the conversation's error. */
export async function decideTool(conversationId: string, streamId: string, callId: string, decision: ToolDecision): Promise<void> {
    try {
        await getTransport().request("chat.decideTool", {streamId, callId, decision});
    } catch (error) {
        useChatStore.getState().setError(conversationId, errorMessage(error));
    }
}
