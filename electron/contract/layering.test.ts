/**
 * The layering and IPC rules of docs/architecture.md live in eslint.config.js (the allow-list of layers, enforced by
 * lint/layering.js); this runs ESLint on in-memory snippets (file paths that need not exist) to prove the rules still
 * fire, so they cannot silently disappear from the config.
 */
import {execFile} from "node:child_process";
import {readdirSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {promisify} from "node:util";
import {ESLint} from "eslint";
import {beforeAll, describe, expect, it} from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
let eslint: ESLint;
/** The rule that holds every import to the allow-list of layers (eslint.config.js `layers`, lint/layering.js). */
const LAYERING = "layers/allow-list";

/** The ids of the rules ESLint reports for `code` as if it were the file at `filePath` (relative to the repo root). */
async function rulesReported(filePath: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, {filePath, warnIgnored: true});
    if (result == null)
        throw new Error(`ESLint returned no result for ${filePath}`);
    const fatal = result.messages.find((message) => message.fatal);
    if (fatal != null)
        throw new Error(`${filePath}: ${fatal.message}`);
    return result.messages.map((message) => message.ruleId ?? "(none)");
}

beforeAll(() => {
    eslint = new ESLint({cwd: root});
});

describe("layering lint rules", () => {
    it("engine: importing electron is an error, statically or dynamically", async () => {
        expect(await rulesReported("electron/engine/runtime/probe.ts", `import {app} from "electron";\nexport const a = app;\n`))
            .toContain("@typescript-eslint/no-restricted-imports");
        expect(await rulesReported("electron/engine/probe.ts", `import type {App} from "electron/main";\nexport type A = App;\n`))
            .toContain("@typescript-eslint/no-restricted-imports");
        expect(await rulesReported("electron/engine/probe.ts", `export const e = await import("electron");\n`))
            .toContain("no-restricted-syntax");
    });

    it("engine: importing host, main, web or the renderer is an error; the contract's types are fine", async () => {
        for (const source of ["../../host/HostService.js", "../../main/main.js", "../../web/serveWeb.js", "../../../renderer/src/App/App"]) {
            expect(await rulesReported("electron/engine/runtime/probe.ts", `import {x} from "${source}";\nexport const y = x;\n`), source)
                .toContain(LAYERING);
        }
        expect(await rulesReported("electron/engine/runtime/probe.ts",
            `import type {Budget} from "../../contract/ipc.js";\nimport {z} from "../planner/budget.js";\nexport const b: Budget | typeof z = z;\n`))
            .toEqual([]);
    });

    it("renderer: values and types from the contract are fine", async () => {
        expect(await rulesReported("renderer/src/stores/probe.ts",
            `import {requestNames} from "../../../electron/contract/requestNames";\nexport const n = requestNames;\n`))
            .toEqual([]);
        expect(await rulesReported("renderer/src/stores/probe.ts",
            `import type {Budget} from "../../../electron/contract/ipc";\nexport type B = Budget;\n`))
            .toEqual([]);
    });

    it("contract: a leaf that imports only its own files, not even types from elsewhere", async () => {
        for (const source of ["../engine/runtime/memoryReport.js", "../host/HostService.js", "../../renderer/src/App/App", "valibot", "node:fs", "electron"]) {
            expect(await rulesReported("electron/contract/probe.ts", `import type {X} from "${source}";\nexport type Y = X;\n`), source)
                .toContain("@typescript-eslint/no-restricted-imports");
        }
        expect(await rulesReported("electron/contract/probe.ts", `export const m = await import("../engine/index.js");\n`))
            .toContain("no-restricted-syntax");
        expect(await rulesReported("electron/contract/probe.ts", `export const env = process.env;\n`))
            .toContain("no-restricted-globals");
        expect(await rulesReported("electron/contract/probe.ts",
            `import {STRATEGY_NAMES} from "./strategies.js";\nimport type {Budget} from "./settings.js";\nexport const s: readonly string[] | Budget = STRATEGY_NAMES;\n`))
            .toEqual([]);
    });

    it("renderer: electron, the engine (even its types) and Node built-ins are errors", async () => {
        for (const source of ["electron", "node:fs", "path"]) {
            expect(await rulesReported("renderer/src/stores/probe.ts", `import type {X} from "${source}";\nexport type Y = X;\n`), source)
                .toContain("@typescript-eslint/no-restricted-imports");
        }
        expect(await rulesReported("renderer/src/stores/probe.ts", `import type {X} from "../../../electron/engine/gguf/inspectGguf";\nexport type Y = X;\n`))
            .toContain(LAYERING);
        expect(await rulesReported("renderer/src/stores/probe.ts", `export const env = process.env;\n`))
            .toContain("no-restricted-globals");
    });

    it("no import runs back up: engine below serve below the engine process, and host beside serve", async () => {
        const backUp: [string, string][] = [
            ["electron/engine/runtime/probe.ts", "../../serve/serveOpenAi.js"],
            ["electron/engine/runtime/probe.ts", "../../engineProcess/EngineService.js"],
            ["electron/engine/probe.ts", "../cli/main.js"],
            ["electron/serve/probe.ts", "../engineProcess/EngineService.js"],
            ["electron/serve/http/probe.ts", "../../host/HostService.js"],
            ["electron/serve/probe.ts", "../cli/main.js"],
            ["electron/host/probe.ts", "../serve/serveOpenAi.js"],
            ["electron/host/chat/probe.ts", "../../engineProcess/EngineService.js"],
            ["electron/engineProcess/probe.ts", "../host/HostService.js"],
            ["electron/web/probe.ts", "../main/main.js"],
            ["electron/contract/probe.ts", "../serve/serveOpenAi.js"]
        ];
        for (const [file, source] of backUp) {
            expect(await rulesReported(file, `import {x} from "${source}";\nexport const y = x;\n`), `${file} -> ${source}`).toContain(LAYERING);
            // a type-only import and a dynamic one are imports too
            expect(await rulesReported(file, `import type {X} from "${source}";\nexport type Y = X;\n`), `${file} -> type ${source}`).toContain(LAYERING);
            expect(await rulesReported(file, `export const m = await import("${source}");\n`), `${file} -> import(${source})`).toContain(LAYERING);
        }
        // the compiled tree is the same layers: a script reaching the engine through dist/ is fine, the engine reaching up is not
        expect(await rulesReported("scripts/probe.mjs", `import {x} from "../dist/electron/engine/index.js";\nexport const y = x;\n`)).toEqual([]);
        expect(await rulesReported("electron/engine/probe.ts", `import {x} from "../../dist/electron/serve/serveOpenAi.js";\nexport const y = x;\n`))
            .toContain(LAYERING);
    });

    it("the downward imports of the table are fine", async () => {
        const downward: [string, string][] = [
            ["electron/serve/probe.ts", "../engine/runtime/PlacedModel.js"],
            ["electron/engineProcess/probe.ts", "../serve/serveOpenAi.js"],
            ["electron/cli/commands/probe.ts", "../../engineProcess/EngineService.js"],
            ["electron/main/probe.ts", "../host/HostService.js"],
            ["electron/host/probe.ts", "../engine/runtime/PlacedModel.js"]
        ];
        for (const [file, source] of downward)
            expect(await rulesReported(file, `import {x} from "${source}";\nexport const y = x;\n`), `${file} -> ${source}`).toEqual([]);
    });

    it("every folder of electron/ and every top folder with code has a row in the table; a new folder is an error until it has one", async () => {
        expect(await rulesReported("electron/newLayer/probe.ts", `export const a = 1;\n`)).toContain(LAYERING);
        expect(await rulesReported("newTopFolder/probe.ts", `export const a = 1;\n`)).toContain(LAYERING);
        const folders = readdirSync(path.join(root, "electron"), {withFileTypes: true}).filter((entry) => entry.isDirectory())
            .map((entry) => `electron/${entry.name}`);
        expect(folders.length).toBeGreaterThan(7);
        for (const folder of [...folders, "renderer/src", "e2e", "scripts", "bench", "bin", "native", "lint"])
            expect(await rulesReported(`${folder}/probe.ts`, `export const a = 1;\n`), folder).toEqual([]);
    });

    it("IPC: only the registration helper and the preload touch ipcMain / ipcRenderer", async () => {
        expect(await rulesReported("electron/main/probe.ts", `import {ipcMain} from "electron";\nipcMain.handle("x", () => 1);\n`))
            .toContain("no-restricted-syntax");
        expect(await rulesReported("electron/host/probe.ts", `import * as electron from "electron";\nelectron["ipcRenderer"].send("x");\n`))
            .toContain("no-restricted-syntax");
    });

    it("preload: no ipcRenderer passthrough and no caller-chosen channel", async () => {
        const header = `import {contextBridge, ipcRenderer} from "electron";\n`;
        for (const exposed of ["ipcRenderer", "{send: ipcRenderer.send}"]) {
            expect(await rulesReported("electron/main/preload.ts", header + `contextBridge.exposeInMainWorld("api", ${exposed});\n`), exposed)
                .toContain("tensorwise/no-ipc-passthrough");
        }
        expect(await rulesReported("electron/main/preload.ts",
            header + `contextBridge.exposeInMainWorld("api", {invoke: (channel: string, arg: unknown) => ipcRenderer.invoke(channel, arg)});\n`))
            .toContain("tensorwise/no-ipc-passthrough");
        expect(await rulesReported("electron/main/preload.ts",
            header + `const channel = "tensorwise:request:x";\ncontextBridge.exposeInMainWorld("api", {x: (arg: unknown) => ipcRenderer.invoke(channel, arg)});\n`))
            .toEqual([]);
    });

    it("no explicit any", async () => {
        expect(await rulesReported("electron/host/probe.ts", `export const x = JSON.parse("1") as any;\n`))
            .toContain("@typescript-eslint/no-explicit-any");
    });
});

describe("the renderer's TypeScript project", () => {
    // The lint rules above keep the renderer to itself and the contract, and the contract to itself; this keeps
    // renderer/tsconfig.json from pulling other folders in by its own `include` list.
    it("compiles only renderer/src and electron/contract (never the engine or the host)", async () => {
        const tsc = path.join(root, "node_modules/typescript/bin/tsc");
        const {stdout} = await promisify(execFile)(process.execPath, [tsc, "-p", "renderer/tsconfig.json", "--listFilesOnly"], {cwd: root});
        const projectFiles = stdout.split("\n").map((line) => line.trim()).filter((line) => line !== "")
            .map((file) => path.relative(root, file).split(path.sep).join("/"))
            // (node_modules may be a link to another checkout's: its files then sit outside this one)
            .filter((file) => !file.split("/").includes("node_modules"));
        expect(projectFiles.filter((file) => file.startsWith("electron/contract/")).length).toBeGreaterThan(5);
        expect(projectFiles.filter((file) => !file.startsWith("renderer/src/") && !file.startsWith("electron/contract/"))).toEqual([]);
    }, 180_000);
});
