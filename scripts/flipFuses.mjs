// electron-builder `afterPack` hook (package.json build.afterPack): flips the packaged Electron binary's fuses to the
// settings in package.json's `electronFuses` (named as electron-builder 26's option of that name, which 25.1.8 lacks),
// then reads the wire back and fails the build if any fuse did not take. Runs before code signing.
// Fuses: https://www.electronjs.org/docs/latest/tutorial/fuses — RunAsNode off is why the engine runs in a
// utilityProcess (electron/main/utilityEngineSpawner.ts), not a child_process.fork of the Electron binary.
import {readFile} from "node:fs/promises";
import path from "node:path";
import {fileURLToPath} from "node:url";
import fuses from "@electron/fuses";

const {flipFuses, getCurrentFuseWire, FuseV1Options, FuseVersion} = fuses;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** `FuseState` of @electron/fuses: the wire holds ASCII "0" / "1". */
const DISABLED = 48;
const ENABLED = 49;

/** package.json's `electronFuses`, as `@electron/fuses` options keyed by `FuseV1Options`; throws on an unknown name. */
export async function readFuseSettings(packageJsonPath = path.join(root, "package.json")) {
    const settings = JSON.parse(await readFile(packageJsonPath, "utf8")).electronFuses;
    if (settings == null || typeof settings !== "object")
        throw new Error(`${packageJsonPath} has no "electronFuses" object`);
    const options = {};
    for (const [name, value] of Object.entries(settings)) {
        const fuse = FuseV1Options[name[0].toUpperCase() + name.slice(1)];
        if (typeof fuse !== "number" || typeof value !== "boolean")
            throw new Error(`electronFuses.${name}: not a known fuse with a true/false value`);
        options[fuse] = value;
    }
    return options;
}

/** Flips `binaryPath`'s fuses to `options` and checks each one on the written file. */
export async function applyFuses(binaryPath, options, {resetAdHocDarwinSignature = false} = {}) {
    await flipFuses(binaryPath, {version: FuseVersion.V1, resetAdHocDarwinSignature, ...options});
    const wire = await getCurrentFuseWire(binaryPath);
    for (const [fuse, wanted] of Object.entries(options)) {
        const state = wire[fuse];
        if (state !== (wanted ? ENABLED : DISABLED))
            throw new Error(`fuse ${FuseV1Options[fuse]} of ${binaryPath} reads ${state}, not ${wanted ? "enabled" : "disabled"}`);
    }
}

/** The hook electron-builder calls with its AfterPackContext. */
export default async function afterPack(context) {
    const platform = context.electronPlatformName;
    const extension = {darwin: ".app", mas: ".app", win32: ".exe"}[platform] ?? "";
    // Linux names the binary after `executableName`; macOS and Windows after the product file name
    const name = platform === "linux" ? context.packager.executableName : context.packager.appInfo.productFilename;
    const binaryPath = path.join(context.appOutDir, `${name}${extension}`);
    // arm64 macOS refuses a binary whose ad-hoc signature no longer matches
    const resetAdHocDarwinSignature = (platform === "darwin" || platform === "mas") && context.arch === 3; // Arch.arm64
    await applyFuses(binaryPath, await readFuseSettings(), {resetAdHocDarwinSignature});
    console.log(`  • fuses set on ${binaryPath}`);
}
