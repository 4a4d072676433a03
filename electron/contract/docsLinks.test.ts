/**
 * Every relative link of README.md and of docs/ leads somewhere: the file it names exists in this repository, and a
 * `#anchor` into a Markdown file names one of its headings (as GitHub slugs them). A page moved or a heading renamed
 * without its links fails here, not in a newcomer's browser.
 */
import {existsSync, readdirSync, readFileSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, expect, it} from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The Markdown files whose links are checked: the README, every page of docs/, and the READMEs they lead to. */
function checkedPages(): string[] {
    const docs = readdirSync(path.join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`);
    return ["README.md", ...docs, "electron/serve/README.md"];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
    return heading.trim().toLowerCase().replace(/[`*_]/g, "").replace(/[^\p{L}\p{N} -]/gu, "").replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
    const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
    return new Set([...text.matchAll(/^#{1,6} +(.+)$/gm)].map((match) => slug(match[1]!)));
}

/** Every `[text](target)` and `![alt](target)` outside code blocks and code spans. */
function linksOf(text: string): string[] {
    const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
    return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

describe("links in README.md and docs/", () => {
    it("README fits one screen (at most 120 lines)", () => {
        expect(readFileSync(path.join(root, "README.md"), "utf8").trimEnd().split("\n").length).toBeLessThanOrEqual(120);
    });

    it("the pages this checks are there", () => {
        for (const page of ["docs/app.md", "docs/cli.md", "docs/server.md", "docs/rpc.md", "docs/how-it-works.md", "docs/safety.md",
            "docs/benchmarks.md", "docs/architecture.md", "docs/development.md", "docs/testing.md"])
            expect(checkedPages(), page).toContain(page);
    });

    it("every relative link names a file that exists, and every anchor a heading of it", () => {
        const broken: string[] = [];
        for (const page of checkedPages()) {
            for (const target of linksOf(readFileSync(path.join(root, page), "utf8"))) {
                if (/^[a-z]+:/i.test(target))
                    continue;
                const [file = "", anchor] = target.split("#");
                const resolved = file === "" ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), decodeURIComponent(file));
                if (!resolved.startsWith(root) || !existsSync(resolved))
                    broken.push(`${page}: ${target} (no such file)`);
                else if (anchor != null && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor))
                    broken.push(`${page}: ${target} (no heading #${anchor})`);
            }
        }
        expect(broken).toEqual([]);
    });
});
