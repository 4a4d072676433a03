#!/usr/bin/env node
// tensorwise CLI: the same engine as the app, headless.
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = path.join(root, "dist", "electron", "cli", "main.js");
if (!fs.existsSync(entry)) {
    console.error("tensorwise is not built yet: run `npm install` (or `npm run build`) in " + root);
    process.exit(1);
}
const {main} = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv.slice(2));
