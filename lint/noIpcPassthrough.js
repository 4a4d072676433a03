/**
 * ESLint rule for the preload: the page may reach only the channels the contract names, so
 * - `ipcRenderer` is used only as `ipcRenderer.method(…)`: never passed, stored or exposed itself (`exposeInMainWorld("x",
 *   ipcRenderer)`, `{ipc: ipcRenderer}`, `const r = ipcRenderer`), nor a method of it (`{send: ipcRenderer.send}`), and
 * - no `ipcRenderer.*` call takes its channel from a parameter of the function it sits in
 *   (`(channel, ...args) => ipcRenderer.invoke(channel, ...args)`), nor from a spread: that function would forward
 *   whatever channel its caller names. A channel bound in an enclosing scope (`const channel = requestChannel(name)`,
 *   or a parameter of an outer factory) is fine: the function handed to the page then has its channel fixed.
 */

/** @param {import("eslint").Scope.Scope | null} scope @param {string} name */
function findVariable(scope, name) {
    for (let current = scope; current != null; current = current.upper) {
        const variable = current.set.get(name);
        if (variable != null)
            return variable;
    }
    return undefined;
}

/** @type {import("eslint").Rule.RuleModule} */
export default {
    meta: {
        type: "problem",
        docs: {description: "Preload exposes named functions only: no ipcRenderer passthrough, no caller-chosen channel."},
        schema: [],
        messages: {
            exposed: "Use `ipcRenderer` only as `ipcRenderer.method(…)` with a fixed channel: passing it (or one of its methods) around can expose it to the page.",
            channelFromParameter: "The channel of `ipcRenderer.{{method}}` comes from the parameter `{{name}}`: that forwards an arbitrary channel. Bind the channel from the contract in an enclosing scope.",
            channelSpread: "`ipcRenderer.{{method}}` takes its channel from a spread: that forwards an arbitrary channel."
        }
    },
    create(context) {
        const sourceCode = context.sourceCode;
        return {
            "Identifier[name='ipcRenderer']"(node) {
                const parent = node.parent;
                if (parent.type === "ImportSpecifier")
                    return;
                if (parent.type === "MemberExpression" && parent.object === node && parent.parent.type === "CallExpression" &&
                    parent.parent.callee === parent)
                    return;
                context.report({node, messageId: "exposed"});
            },
            "CallExpression[callee.type='MemberExpression'][callee.object.name='ipcRenderer']"(node) {
                const method = node.callee.property.type === "Identifier" ? node.callee.property.name : "?";
                const channel = node.arguments[0];
                if (channel == null)
                    return;
                if (channel.type === "SpreadElement") {
                    context.report({node: channel, messageId: "channelSpread", data: {method}});
                    return;
                }
                const scope = sourceCode.getScope(node);
                let innermostFunction = node.parent;
                while (innermostFunction != null && !/Function/.test(innermostFunction.type))
                    innermostFunction = innermostFunction.parent;
                const visit = (expr) => {
                    if (expr == null || typeof expr !== "object")
                        return;
                    if (expr.type === "Identifier") {
                        const variable = findVariable(scope, expr.name);
                        if (variable?.defs.some((def) => def.type === "Parameter" && def.node === innermostFunction))
                            context.report({node: expr, messageId: "channelFromParameter", data: {method, name: expr.name}});
                        return;
                    }
                    for (const [key, value] of Object.entries(expr)) {
                        if (key === "parent" || key === "loc" || key === "range")
                            continue;
                        // `a.b` and `{b: …}`: the name `b` is not a reference.
                        if ((expr.type === "MemberExpression" && key === "property" && !expr.computed) ||
                            (expr.type === "Property" && key === "key" && !expr.computed))
                            continue;
                        if (Array.isArray(value))
                            value.forEach(visit);
                        else if (value != null && typeof value === "object" && typeof value.type === "string")
                            visit(value);
                    }
                };
                visit(channel);
            }
        };
    }
};
