// ESLint flat config: the layering and IPC rules of docs/architecture.md as errors, plus recommended correctness rules
// (typescript-eslint's non-type-checked preset, so a run takes seconds). electron/contract/layering.test.ts checks that
// the layering rules still fire. In flat config the last block that sets a rule for a file replaces its options whole,
// so each layer's restriction lists are built from the shared pieces below rather than layered on top of each other.
import {builtinModules} from "node:module";
import js from "@eslint/js";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";
import layering from "./lint/layering.js";
import noIpcPassthrough from "./lint/noIpcPassthrough.js";

const tsFiles = ["**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts"];
const jsFiles = ["**/*.js", "**/*.mjs", "**/*.cjs"];

/** The only two files that may touch `ipcMain` / `ipcRenderer`. */
const ipcMainFile = "electron/main/registerRequests.ts";
const preloadFile = "electron/main/preload.ts";

// ---- import restrictions (for @typescript-eslint/no-restricted-imports, which understands `import type`) ----------

/** The `electron` package and its subpath modules (`electron/main`, `electron/renderer`, `electron/common`). */
const electronPackage = {
    regex: "^electron(/.*)?$",
    message: "This layer is Electron-free: it must not import `electron`."
};

const nodeBuiltins = [...new Set(builtinModules.filter((name) => !name.startsWith("_")).map((name) => name.split("/")[0]))];
const nodeBuiltinImports = [
    {regex: "^node:", message: "No Node built-ins here: this code runs in the browser (the renderer)."},
    {
        regex: `^(${nodeBuiltins.join("|")})(/.*)?$`,
        message: "No Node built-ins here: this code runs in the browser (the renderer)."
    }
];

// ---- layers: which may import which (lint/layering.js resolves every relative import to its file) ------------------

/**
 * The one allow-list of imports between layers, bottom floor first: a layer may import its own files and those of the
 * layers listed (VS Code's `code-layering` rule works the same way). A top folder of the repository is a layer, and so
 * is each folder of electron/; a file in a folder with no row here is a lint error. `dist/` is the compiled tree of
 * the same sources, so a script that imports `dist/electron/engine/…` imports the engine. docs/architecture.md
 * explains each row.
 */
const layers = {
    "electron/contract": [],
    "electron/engine": ["electron/contract"],
    "electron/serve": ["electron/contract", "electron/engine"],
    "electron/engineProcess": ["electron/contract", "electron/engine", "electron/serve"],
    "electron/host": ["electron/contract", "electron/engine"],
    "electron/web": ["electron/contract", "electron/engine", "electron/host"],
    "electron/main": ["electron/contract", "electron/host", "electron/web"],
    "electron/cli": ["electron/contract", "electron/engine", "electron/serve", "electron/engineProcess", "electron/host"],
    "renderer": ["electron/contract"],
    "e2e": ["electron/contract", "electron/engine", "renderer"],
    "bin": ["electron/cli"],
    "scripts": ["electron/contract", "electron/engine", "electron/serve", "electron/engineProcess", "electron/cli"],
    "bench": ["electron/contract", "electron/engine", "electron/serve", "electron/engineProcess", "electron/cli", "scripts", "e2e"],
    "native": [],
    "lint": []
};

const electronFreeImports = {patterns: [electronPackage]};

/**
 * The contract is a leaf: every process (engine, host, renderer, CLI) imports it, so it imports nothing but its own
 * files (`./x.js`), not even types: no packages, no Node built-ins, no other folder of the project.
 */
const contractImports = {
    patterns: [
        electronPackage,
        ...nodeBuiltinImports,
        {
            regex: "^(?!\\./)|\\.\\./",
            message: "electron/contract is a leaf: it imports only its own files (`./x.js`), so every process can use it."
        }
    ]
};

const rendererImports = {
    patterns: [
        {regex: "^electron(/.*)?$", message: "The renderer must not import `electron`: use the transport (window.tensorwise)."},
        ...nodeBuiltinImports
    ]
};

/** Node's globals, which neither the renderer nor the contract (compiled into the renderer) may use. */
const nodeGlobals = ["process", "Buffer", "global", "require", "module", "__dirname", "__filename", "setImmediate"].map((name) => ({
    name,
    message: "No Node globals here: this code runs in a sandboxed page (the renderer)."
}));

// ---- syntax restrictions (no-restricted-syntax) --------------------------------------------------------------------

const ipcMessage = `Only ${ipcMainFile} (the typed handler registration) and ${preloadFile} may touch ipcMain/ipcRenderer.`;
/** Any mention of ipcMain / ipcRenderer / `<webContents>.ipc` (Electron's per-window IpcMain). */
const ipcSyntax = [
    {selector: "Identifier[name=/^ipc(Main|Renderer)$/]", message: ipcMessage},
    {selector: "MemberExpression[computed=true][property.value=/^ipc(Main|Renderer)$/]", message: ipcMessage},
    {selector: "MemberExpression[computed=false][property.name='ipc']", message: ipcMessage}
];

/** Dynamic `import("electron")` / `require("electron")`, which no-restricted-imports does not see. */
const dynamicElectronSyntax = [
    {selector: "ImportExpression[source.value=/^electron(\\u002F.*)?$/]", message: electronPackage.message},
    {
        selector: "CallExpression[callee.name='require'][arguments.0.value=/^electron(\\u002F.*)?$/]",
        message: electronPackage.message
    }
];

export default tseslint.config(
    {
        ignores: [
            "**/node_modules/", "**/dist/", "**/build/", "**/.cache/", "**/test-results/", "**/playwright-report/",
            "bench/tmp/", "**/.gl/", "**/.whl/", "**/.devbundle/", "release/", "native/src/"
        ]
    },
    {linterOptions: {reportUnusedDisableDirectives: "error"}},
    // The typescript-eslint plugin for every file, so the layering blocks below can use its rules on .js files too.
    {plugins: {"@typescript-eslint": tseslint.plugin}},
    js.configs.recommended,
    {files: tsFiles, extends: [tseslint.configs.recommended]},
    {
        files: [...jsFiles, ...tsFiles],
        ignores: ["renderer/src/**"],
        languageOptions: {ecmaVersion: 2023, sourceType: "module", globals: {...globals.node}}
    },
    {
        files: ["renderer/src/**"],
        languageOptions: {ecmaVersion: 2023, sourceType: "module", globals: {...globals.browser}},
        plugins: {"react-hooks": reactHooks},
        rules: {"react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "error"}
    },
    {
        files: tsFiles,
        rules: {
            "@typescript-eslint/no-explicit-any": "error",
            "@typescript-eslint/no-unused-vars": ["error", {argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none"}]
        }
    },

    // ---- IPC: nobody but the two IPC files touches ipcMain / ipcRenderer --------------------------------------------
    {
        files: [...jsFiles, ...tsFiles],
        ignores: [ipcMainFile, preloadFile],
        rules: {"no-restricted-syntax": ["error", ...ipcSyntax]}
    },
    {
        files: [preloadFile],
        plugins: {tensorwise: {rules: {"no-ipc-passthrough": noIpcPassthrough}}},
        rules: {"tensorwise/no-ipc-passthrough": "error"}
    },

    // ---- layering ----------------------------------------------------------------------------------------------------
    {
        files: [...jsFiles, ...tsFiles],
        plugins: {layers: {rules: {"allow-list": layering}}},
        rules: {"layers/allow-list": ["error", layers]}
    },
    {
        // Only Electron main (electron/main/) may import `electron`: every other layer of electron/ runs in Node alone.
        files: ["electron/**"],
        ignores: ["electron/main/**", "electron/contract/**"],
        rules: {
            "@typescript-eslint/no-restricted-imports": ["error", electronFreeImports],
            "no-restricted-syntax": ["error", ...ipcSyntax, ...dynamicElectronSyntax]
        }
    },
    {
        files: ["electron/contract/**"],
        ignores: ["**/*.test.ts"],
        rules: {
            "@typescript-eslint/no-restricted-imports": ["error", contractImports],
            "no-restricted-syntax": ["error", ...ipcSyntax, ...dynamicElectronSyntax, {
                selector: "ImportExpression",
                message: "electron/contract is a leaf: no dynamic imports."
            }],
            "no-restricted-globals": ["error", ...nodeGlobals]
        }
    },
    {
        files: ["renderer/**"],
        rules: {
            "@typescript-eslint/no-restricted-imports": ["error", rendererImports],
            "no-restricted-syntax": ["error", ...ipcSyntax, ...dynamicElectronSyntax],
            // renderer/tsconfig.json has Node's types for the tests; the app code itself must not lean on them.
            "no-restricted-globals": ["error", ...nodeGlobals]
        }
    }
);
