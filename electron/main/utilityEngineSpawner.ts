/**
 * The engine as an Electron utility process (`utilityProcess.fork`): a Node environment in its own OS process that
 * needs no RunAsNode fuse (scripts/flipFuses.mjs turns it off). The engine talks over `process.parentPort` there
 * (electron/engineProcess/engineMain.ts). Call only after the app's `ready` event.
 */
import {utilityProcess} from "electron";
import type {EngineSpawner} from "../host/engineChild/forkEngineProcess.js";

/** An {@link EngineSpawner} for EngineClient that starts the engine with `utilityProcess.fork`. */
export const utilityEngineSpawner: EngineSpawner = (entry, {env}) => {
    const child = utilityProcess.fork(entry, [], {env, stdio: ["ignore", "pipe", "pipe"], serviceName: "tensorwise engine"});
    let exited = false;
    child.once("exit", () => {
        exited = true;
    });
    return {
        get pid() {
            return child.pid;
        },
        get exited() {
            return exited;
        },
        // the streams exist from fork() on and become null after exit: keep the ones the host subscribes to
        stdout: child.stdout,
        stderr: child.stderr,
        send(message) {
            if (exited)
                return false;
            child.postMessage(message);
            return true;
        },
        onMessage: (listener) => void child.on("message", listener),
        // a utility process reports no signal, only the exit code from waitpid / GetExitCodeProcess
        onExit: (listener) => void child.once("exit", (code) => listener(code, null)),
        // V8 fatal errors come as `error` and are always followed by `exit`, which reports the end
        onError: () => {},
        kill: () => void child.kill()
    };
};
