/**
 * The one place that touches `ipcMain`: a handler per contract request, each checking that the sender is the main
 * frame of one of our windows showing our own page, and answering with the contract's `Reply` (electron/contract/envelope.ts; errors keep their code).
 */
import {ipcMain, type IpcMainInvokeEvent, type WebContents} from "electron";
import {requestChannel} from "../contract/bridge.js";
import type {Reply} from "../contract/envelope.js";
import {requestNames} from "../contract/requestNames.js";
import {toContractError} from "../contract/TensorwiseError.js";
import type {HostClient} from "../host/HostContext.js";
import type {HostService} from "../host/HostService.js";
import {isAppUrl} from "./appUrl.js";

export function isTrustedSender(event: IpcMainInvokeEvent, clientOf: (contents: WebContents) => HostClient | undefined): boolean {
    const frame = event.senderFrame;
    if (frame == null || frame !== event.sender.mainFrame)
        return false;
    if (clientOf(event.sender) == null)
        return false;
    return isAppUrl(frame.url);
}

export function registerRequests(service: HostService, clientOf: (contents: WebContents) => HostClient | undefined): () => void {
    for (const name of requestNames) {
        ipcMain.handle(requestChannel(name), async (event, arg: unknown): Promise<Reply<unknown>> => {
            const client = clientOf(event.sender);
            if (client == null || !isTrustedSender(event, clientOf))
                return {ok: false, error: {code: "untrusted-sender", message: "request refused: unknown sender frame"}};
            try {
                return {ok: true, result: await service.handle(name, arg, client) ?? null};
            } catch (error) {
                return {ok: false, error: toContractError(error)};
            }
        });
    }
    return () => requestNames.forEach((name) => ipcMain.removeHandler(requestChannel(name)));
}
