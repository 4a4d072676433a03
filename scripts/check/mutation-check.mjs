#!/usr/bin/env node
// Mutation check: breaks the product on purpose, one small text patch at a time, in a scratch copy of this checkout,
// and expects the named test files to fail. Prints "caught" or "MISSED" per mutant and a summary; exits 1 when any
// mutant is missed or the unmutated tests do not pass. Not part of `npm test` (minutes per mutant on 2 cores).
//
//   node scripts/check/mutation-check.mjs                 every mutant
//   node scripts/check/mutation-check.mjs milp-removed    only the named ones (comma or space separated)
//   node scripts/check/mutation-check.mjs --list          the mutants and their tests
//   node scripts/check/mutation-check.mjs --keep          keep the scratch copy (its path is printed)
//
// The copy holds the tracked files as they are in the working tree (uncommitted edits included) with node_modules
// symlinked, so the native builds are shared (native/install.mjs hashes paths relative to the root: a copy is up to
// date). Each mutant must apply exactly once, or the check stops: a patch that no longer matches the code is a bug in
// this list, not a caught mutant. A mutant counts as caught only when vitest reports failed tests (not a load error).
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {MUTANTS} from "./mutants.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const keep = args.includes("--keep");

if (args.includes("--list")) {
    for (const m of MUTANTS) console.log(`${m.id.padEnd(30)} ${m.file}\n${"".padEnd(30)} ${m.description}\n${"".padEnd(30)} → ${m.tests.join(", ")}`);
    process.exit(0);
}
const wanted = args.filter((a) => !a.startsWith("--")).flatMap((a) => a.split(",")).filter(Boolean);
const unknown = wanted.filter((id) => !MUTANTS.some((m) => m.id === id));
if (unknown.length > 0) {
    console.error(`unknown mutant(s): ${unknown.join(", ")} (see --list)`);
    process.exit(2);
}
const selected = wanted.length > 0 ? MUTANTS.filter((m) => wanted.includes(m.id)) : MUTANTS;

/** Copies the tracked files of the working tree into a fresh folder and links node_modules. */
function scratchCopy() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-mutants-"));
    const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {cwd: root, encoding: "utf8"});
    if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
    for (const file of listed.stdout.split("\0").filter(Boolean)) {
        const from = path.join(root, file);
        if (!fs.existsSync(from)) continue; // deleted in the working tree
        fs.mkdirSync(path.dirname(path.join(dir, file)), {recursive: true});
        fs.copyFileSync(from, path.join(dir, file));
    }
    fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
    return dir;
}

/** Runs vitest on `tests` in `dir`; returns whether it passed, whether tests failed, and the output tail. */
function runTests(dir, tests) {
    const result = spawnSync(process.execPath, [path.join(dir, "node_modules", "vitest", "vitest.mjs"), "run", ...tests], {
        cwd: dir, encoding: "utf8", env: {...process.env, NO_COLOR: "1", FORCE_COLOR: "0"}, maxBuffer: 64 * 1024 * 1024
    });
    // eslint-disable-next-line no-control-regex -- strips terminal colour codes
    const output = `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
    return {passed: result.status === 0, testsFailed: /Tests\s+\d+ failed/.test(output), output};
}

/** Applies `mutant` to the copy; throws unless its `find` text occurs exactly once. Returns the undo. */
function apply(dir, mutant) {
    const file = path.join(dir, mutant.file);
    const original = fs.readFileSync(file, "utf8");
    const count = original.split(mutant.find).length - 1;
    if (count !== 1) throw new Error(`mutant ${mutant.id}: the text to replace occurs ${count} times in ${mutant.file} (expected once); update scripts/check/mutants.mjs`);
    fs.writeFileSync(file, original.replace(mutant.find, () => mutant.replace));
    return () => fs.writeFileSync(file, original);
}

const dir = scratchCopy();
console.log(`scratch copy: ${dir}`);
let exitCode = 0;
try {
    const allTests = [...new Set(selected.flatMap((m) => m.tests))];
    console.log(`baseline: ${allTests.length} test file(s) without mutants…`);
    const baseline = runTests(dir, allTests);
    if (!baseline.passed) {
        console.error(baseline.output.slice(-6000));
        console.error("baseline FAILED: the named tests must pass on the unmutated code before mutants mean anything");
        process.exit(1);
    }
    const rows = [];
    for (const mutant of selected) {
        const undo = apply(dir, mutant);
        const started = Date.now();
        let run;
        try {
            run = runTests(dir, mutant.tests);
        } finally {
            undo();
        }
        const caught = run.testsFailed;
        const seconds = ((Date.now() - started) / 1000).toFixed(0);
        const failedNames = [...run.output.matchAll(/^\s*×\s+(.+?)(?:\s+\d+ms)?$/gm)].map((m) => m[1].trim()).slice(0, 3);
        console.log(`${caught ? "caught" : "MISSED"}  ${mutant.id.padEnd(30)} ${seconds.padStart(4)} s  ${caught ? failedNames[0] ?? "" : mutant.description}`);
        if (!caught && !run.passed) console.log(run.output.slice(-3000));
        rows.push({id: mutant.id, caught});
    }
    const missed = rows.filter((r) => !r.caught);
    console.log(`\n${rows.length - missed.length}/${rows.length} mutants caught${missed.length > 0 ? `; MISSED: ${missed.map((r) => r.id).join(", ")}` : ""}`);
    exitCode = missed.length > 0 ? 1 : 0;
} finally {
    if (keep) console.log(`kept ${dir}`);
    else fs.rmSync(dir, {recursive: true, force: true});
}
process.exit(exitCode);
