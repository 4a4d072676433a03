/** Native dialogs, where the shell has them (Electron); in web mode they answer `null`. */
import {promises as fs} from "node:fs";
import type {HostContext, RequestHandlers} from "../HostContext.js";

type DialogRequestName = "dialog.openModel" | "dialog.saveBenchReport";

export function dialogRequests(host: HostContext): RequestHandlers<DialogRequestName> {
    return {
        "dialog.openModel": async () => {
            const chosen = await (host.platform.openModelDialog?.() ?? Promise.resolve(null));
            // a file the user picked in the native dialog may be opened wherever it is
            if (chosen != null)
                host.access.approve(chosen);
            return chosen;
        },
        "dialog.saveBenchReport": async (arg) => {
            const file = await host.benchStore.exportFile(arg.id, arg.format);
            const target = await (host.platform.saveFileDialog?.(file.fileName) ?? Promise.resolve(null));
            if (target == null)
                return null;
            await fs.copyFile(file.path, target);
            return target;
        }
    };
}
