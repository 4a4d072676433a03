/**
 * `app://tensorwise/…` serves the built renderer from disk (module scripts do not load from file://), with the same
 * strict CSP as web mode. Paths outside the renderer folder are refused.
 */
import {net, protocol} from "electron";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {CONTENT_SECURITY_POLICY} from "../web/serveWeb.js";

export const APP_SCHEME = "app";
export {APP_ORIGIN} from "./appUrl.js";

/** Must run before `app.ready`. */
export function registerAppScheme(): void {
    protocol.registerSchemesAsPrivileged([{scheme: APP_SCHEME, privileges: {standard: true, secure: true, supportFetchAPI: true}}]);
}

export function serveRenderer(rendererDir: string): void {
    const root = path.resolve(rendererDir);
    protocol.handle(APP_SCHEME, async (request) => {
        const url = new URL(request.url);
        if (url.host !== "tensorwise")
            return new Response("not found", {status: 404});
        const relative = decodeURIComponent(url.pathname === "/" ? "/index.html" : url.pathname);
        const file = path.resolve(root, `.${relative}`);
        if (!file.startsWith(root + path.sep))
            return new Response("not found", {status: 404});
        const response = await net.fetch(pathToFileURL(file).toString());
        const headers = new Headers(response.headers);
        headers.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        headers.set("X-Content-Type-Options", "nosniff");
        return new Response(response.body, {status: response.status, headers});
    });
}
