/**
 * Electron main: one window showing the renderer over app://, the engine host (store + engine utility process) behind
 * the typed contract, and the security posture: context isolation, sandbox, strict CSP, sender validation, no
 * navigation, no new windows, no permissions, links opened in the browser only after the user confirms.
 */
import {app, BrowserWindow, dialog, session, shell, type WebContents} from "electron";
import path from "node:path";
import {fileURLToPath} from "node:url";
import type {EventName, Events} from "../contract/ipc.js";
import {eventEnvelope} from "../contract/envelope.js";
import {eventChannel} from "../contract/bridge.js";
import type {HostClient} from "../host/HostContext.js";
import {startHost, type StartedHost} from "../host/startHost.js";
import {APP_ORIGIN, registerAppScheme, serveRenderer} from "./appProtocol.js";
import {isAppUrl} from "./appUrl.js";
import {externalLinkOffer, type ExternalLinkOffer} from "./externalLinkOffer.js";
import {permissionAllowed} from "./permissionAllowed.js";
import {registerRequests} from "./registerRequests.js";
import {utilityEngineSpawner} from "./utilityEngineSpawner.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const rendererDir = path.resolve(here, "../../renderer");
const clients = new Map<number, {client: HostClient; detach: () => void}>();
let host: StartedHost | null = null;

registerAppScheme();
// tests and portable setups pick the data dir (conversations, uploaded models, Chromium profile)
if (process.env.TENSORWISE_DATA_DIR != null)
    app.setPath("userData", path.resolve(process.env.TENSORWISE_DATA_DIR));
// One app per data dir (the lock lives there). With the RunAsNode fuse off, anything that forks the app's own binary
// as if it were Node (e.g. a library's child_process.fork(process.execPath)) starts the app instead: it ends here.
const firstInstance = app.requestSingleInstanceLock();
if (!firstInstance)
    app.quit();
app.on("second-instance", () => {
    const window = BrowserWindow.getAllWindows()[0];
    if (window != null) {
        if (window.isMinimized())
            window.restore();
        window.focus();
    }
});

function attachWindow(contents: WebContents): void {
    clients.get(contents.id)?.detach();
    if (host == null || contents.isDestroyed())
        return;
    const client: HostClient = {
        id: `window-${contents.id}-${Date.now()}`,
        emit<Name extends EventName>(name: Name, payload: Events[Name]) {
            if (!contents.isDestroyed())
                // the contract's event envelope, on the event's own channel (the preload listens only on named ones)
                contents.send(eventChannel(name), eventEnvelope(name, payload));
        }
    };
    clients.set(contents.id, {client, detach: host.service.attach(client)});
}

function detachWindow(contentsId: number): void {
    clients.get(contentsId)?.detach();
    clients.delete(contentsId);
}

function createWindow(): void {
    const window = new BrowserWindow({
        width: 1360, height: 880, minWidth: 960, minHeight: 600, backgroundColor: "#0d0f14", show: false, title: "tensorwise",
        // dist/electron/main → resources/ (packaged: inside app.asar, which Electron reads)
        icon: path.join(here, "..", "..", "..", "resources", "icon.png"),
        webPreferences: {
            preload: path.join(here, "preload.cjs"),
            contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, spellcheck: false
        }
    });
    const {webContents} = window;
    const id = webContents.id;
    attachWindow(webContents);
    // a reload starts a new page: its streams die with the old one
    webContents.on("did-start-navigation", (details) => {
        if (details.isMainFrame && !details.isSameDocument)
            attachWindow(webContents);
    });
    webContents.on("render-process-gone", () => detachWindow(id));
    webContents.on("destroyed", () => detachWindow(id));
    window.once("ready-to-show", () => window.show());
    void window.loadURL(`${APP_ORIGIN}/index.html`);
}

app.on("web-contents-created", (_event, contents) => {
    contents.on("will-navigate", (event, url) => {
        if (!isAppUrl(url))
            event.preventDefault();
    });
    contents.on("will-redirect", (event) => event.preventDefault());
    contents.on("will-attach-webview", (event) => event.preventDefault());
    contents.setWindowOpenHandler(({url}) => {
        // links in model output open in the user's browser after the user confirms, never in the app
        const offer = externalLinkOffer(url);
        if (offer != null)
            void confirmExternalLink(contents, offer);
        return {action: "deny"};
    });
});

let linkDialogOpen = false;

/** Asks before handing a link to the browser: Open / Cancel, Cancel the default; one question at a time. */
async function confirmExternalLink(contents: WebContents, offer: ExternalLinkOffer): Promise<void> {
    if (linkDialogOpen)
        return;
    linkDialogOpen = true;
    try {
        const options = {
            type: "question" as const, title: "Open link", message: "Open this link in your browser?", detail: offer.display,
            buttons: ["Open", "Cancel"], defaultId: 1, cancelId: 1, noLink: true
        };
        const window = BrowserWindow.fromWebContents(contents);
        const {response} = window != null ? await dialog.showMessageBox(window, options) : await dialog.showMessageBox(options);
        if (response === 0)
            await shell.openExternal(offer.url);
    } finally {
        linkDialogOpen = false;
    }
}

app.whenReady().then(async () => {
    if (!firstInstance)
        return;
    // no web permissions but the clipboard write of the Copy buttons, asked or merely checked
    session.defaultSession.setPermissionRequestHandler((_contents, permission, callback, details) =>
        callback(permissionAllowed(permission, details.requestingUrl)));
    session.defaultSession.setPermissionCheckHandler((_contents, permission, requestingOrigin) => permissionAllowed(permission, requestingOrigin));
    serveRenderer(rendererDir);
    host = await startHost({
        dataDir: app.getPath("userData"),
        // only the user drives this window (our bundled UI, sandboxed, strict CSP): a path they type or drop is theirs
        modelAccess: {folders: [path.join(app.getPath("userData"), "models")], anyPath: true},
        // a utility process, not a fork of this binary as Node: the RunAsNode fuse is off (scripts/flipFuses.mjs)
        engine: {spawner: utilityEngineSpawner},
        platform: {
            async openModelDialog() {
                const focused = BrowserWindow.getFocusedWindow();
                const options = {title: "Open a GGUF model", properties: ["openFile" as const], filters: [{name: "GGUF models", extensions: ["gguf"]}]};
                const result = focused != null ? await dialog.showOpenDialog(focused, options) : await dialog.showOpenDialog(options);
                return result.canceled ? null : result.filePaths[0] ?? null;
            },
            async saveFileDialog(defaultName) {
                const focused = BrowserWindow.getFocusedWindow();
                const extension = path.extname(defaultName).slice(1);
                const options = {title: "Save the benchmark report", defaultPath: path.join(app.getPath("downloads"), defaultName),
                    filters: [{name: `${extension.toUpperCase()} files`, extensions: [extension]}]};
                const result = focused != null ? await dialog.showSaveDialog(focused, options) : await dialog.showSaveDialog(options);
                return result.canceled ? null : result.filePath ?? null;
            }
        },
        onEngineLog: (stream, line) => (stream === "stderr" ? process.stderr : process.stdout).write(`[engine ${stream}] ${line}\n`)
    });
    registerRequests(host.service, (contents) => clients.get(contents.id)?.client);
    createWindow();
    app.on("activate", () => {
        if (BrowserWindow.getAllWindows().length === 0)
            createWindow();
    });
}).catch((error: unknown) => {
    dialog.showErrorBox("tensorwise could not start", error instanceof Error ? error.stack ?? error.message : String(error));
    app.exit(1);
});

let quitting = false;
app.on("before-quit", (event) => {
    if (quitting || host == null)
        return;
    event.preventDefault();
    quitting = true;
    void host.dispose().finally(() => app.quit());
});
app.on("window-all-closed", () => {
    if (process.platform !== "darwin")
        app.quit();
});
