#!/usr/bin/env node
// Several dependencies (node-llama-cpp's prebuilt binaries, rollup, esbuild, …) list a package per platform as
// optional dependencies. The npm registry mirror this project is built against serves only some of them, so
// `npm install` leaves the others out of package-lock.json and `npm ci` then refuses the lock as "out of sync".
// This adds lock entries for the missing platform packages (optional, restricted by os/cpu where the name tells),
// so npm ci skips them on this platform and installs them where they exist.
// Run after any `npm install` that rewrites the lock: `node scripts/complete-lockfile.mjs`.
import fs from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(fs.readFileSync(lockPath, "utf8"));
const packages = lock.packages;

const osNames = {
    android: "android", darwin: "darwin", mac: "darwin", macos: "darwin", freebsd: "freebsd", linux: "linux",
    linuxmusl: "linux", win32: "win32", win: "win32", windows: "win32", openbsd: "openbsd", netbsd: "netbsd",
    sunos: "sunos", aix: "aix", openharmony: "openharmony"
};
const cpuNames = {
    arm: "arm", armv7l: "arm", arm64: "arm64", ia32: "ia32", x64: "x64", ppc64: "ppc64", riscv64: "riscv64",
    s390x: "s390x", loong64: "loong64", loongarch64: "loong64", mips64el: "mips64el", x86_64: "x64", aarch64: "arm64"
};

/** Where npm would look for `name` when required from the package at `parentKey`. */
function isResolvable(parentKey, name) {
    let base = parentKey;
    for (;;) {
        if (packages[(base === "" ? "" : base + "/") + "node_modules/" + name] != null)
            return true;
        if (base === "")
            return false;
        const index = base.lastIndexOf("/node_modules/");
        base = index < 0 ? "" : base.slice(0, index);
    }
}

let added = 0;
for (const [key, entry] of Object.entries(packages)) {
    for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
        if (isResolvable(key, name))
            continue;
        const version = /^\d+\.\d+\.\d+(?:[-+][\w.-]+)?$/.test(range) ? range : null;
        if (version == null)
            throw new Error(`${name}@${range} (optional dependency of ${key || "the project"}) is not an exact version`);
        const tokens = name.replace(/^@[^/]+\//, "").split(/[-_]/).map((token) => token.toLowerCase());
        const os = tokens.map((token) => osNames[token]).find((value) => value != null);
        const cpu = tokens.map((token) => cpuNames[token]).find((value) => value != null);
        packages["node_modules/" + name] = {
            version,
            ...(cpu != null ? {cpu: [cpu]} : {}),
            optional: true,
            ...(os != null ? {os: [os]} : {})
        };
        added++;
    }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
console.log(`package-lock.json: added ${added} missing platform package entr${added === 1 ? "y" : "ies"}`);
