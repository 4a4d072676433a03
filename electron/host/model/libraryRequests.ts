/** The model library: recent models, the models folders' files, Load (repeating how each was last loaded) and Forget. */
import {checkRequest} from "../checkRequest.js";
import type {HostContext, RequestHandlers} from "../HostContext.js";

type LibraryRequestName = "library.list" | "library.files" | "library.load" | "library.forget";

export function libraryRequests(host: HostContext): RequestHandlers<LibraryRequestName> {
    return {
        "library.list": async () => await host.library.list(),
        "library.files": async () => await host.modelFolders.list(),
        "library.load": async (arg) => {
            const modelPath = await host.access.check(arg.path);
            const last = await host.library.lastLoad(modelPath);
            // the library file is the user's to edit: what it says to repeat crosses the same checks as a request
            if (last?.name === "load") {
                const {name: _name, ...rest} = last;
                return await host.runLoad({name: "load", arg: checkRequest("model.load", {...rest, path: modelPath, taskId: arg.taskId})}, "load");
            }
            const {name: _name, ...rest} = last ?? {name: "autoOffload", budget: {kind: "auto"}, settings: {}};
            return await host.runLoad({name: "autoOffload", arg: checkRequest("model.autoOffload", {...rest, path: modelPath, taskId: arg.taskId})}, "auto-offload");
        },
        "library.forget": async (arg) => {
            await host.library.forget(arg.path);
            return await host.library.list();
        }
    };
}
