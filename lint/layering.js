/**
 * ESLint rule: which layer (a top folder of the repository, or a folder of electron/) may import which, as one
 * allow-list given in eslint.config.js (the table docs/architecture.md explains). Every relative import, static or
 * dynamic, type-only or not, is resolved to the file it names (`dist/` is the compiled tree of the same sources) and
 * both ends are placed in their layer:
 * - an import into a layer that is not on the importing layer's list is an error ("bad layering");
 * - a file in a folder with no row of its own is an error too, so a new folder cannot slip past the table.
 * Imports inside one layer, imports of packages and imports that leave the repository are not this rule's business
 * (packages are restricted per layer by no-restricted-imports in eslint.config.js).
 */
import path from "node:path";

/** The layer `relativePath` (repository-relative, `/`-separated) belongs to, or `null` for the repository's root files. */
export function layerOf(relativePath) {
    const parts = relativePath.split("/");
    if (parts[0] === "dist")
        parts.shift();
    if (parts.length <= 1)
        return null;
    if (parts[0] === "electron")
        return parts.length > 2 ? `electron/${parts[1]}` : null;
    return parts[0];
}

/** @type {import("eslint").Rule.RuleModule} */
export default {
    meta: {
        type: "problem",
        docs: {description: "One allow-list of which layer may import which (docs/architecture.md)."},
        schema: [{type: "object", additionalProperties: {type: "array", items: {type: "string"}}}],
        messages: {
            badLayering: "Bad layering: {{from}} may not import {{to}} (it may import {{allowed}}). See docs/architecture.md.",
            noRow: "{{layer}} has no row in the layering table (eslint.config.js, `layers`): add one, so its imports are checked."
        }
    },
    create(context) {
        const table = context.options[0] ?? {};
        const root = context.cwd;
        const file = path.relative(root, context.filename).split(path.sep).join("/");
        if (file.startsWith("..") || path.isAbsolute(file))
            return {};
        const from = layerOf(file);
        if (from == null)
            return {};
        const allowed = table[from];

        /** @param {import("estree").Node} node @param {unknown} source */
        function check(node, source) {
            if (allowed == null || typeof source !== "string" || !source.startsWith("."))
                return;
            const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), source));
            if (target.startsWith("..") || target.startsWith("node_modules/"))
                return;
            const to = layerOf(target);
            if (to == null || to === from || allowed.includes(to))
                return;
            context.report({
                node,
                messageId: "badLayering",
                data: {from, to, allowed: allowed.length === 0 ? "nothing outside itself" : allowed.join(", ")}
            });
        }

        return {
            Program(node) {
                if (allowed == null)
                    context.report({node, messageId: "noRow", data: {layer: from}});
            },
            ImportDeclaration: (node) => check(node, node.source.value),
            ExportNamedDeclaration: (node) => check(node, node.source?.value),
            ExportAllDeclaration: (node) => check(node, node.source.value),
            ImportExpression: (node) => check(node, node.source.type === "Literal" ? node.source.value : undefined),
            TSImportType: (node) => check(node, node.argument?.literal?.value),
            CallExpression(node) {
                if (node.callee.type === "Identifier" && node.callee.name === "require" && node.arguments[0]?.type === "Literal")
                    check(node, node.arguments[0].value);
            }
        };
    }
};
