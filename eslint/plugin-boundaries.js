// ESLint rule "nms/plugin-boundaries": a plugin reaches another plugin only through that plugin's contract
// (plugins/<id>/contract.ts). Tests may also import another plugin's index, for its manifest, to boot a kernel
// with it. See docs/plugins.md#contracts and docs/adr/0006-plugin-platform.md.
import { dirname, relative, resolve, sep } from "node:path";

const PLUGINS = `plugins${sep}`;

/** The plugin folder a path (relative to the project root) lies in, and the rest of the path. */
function inPlugin(rel) {
  if (!rel.startsWith(PLUGINS)) return null;
  const [id, ...rest] = rel.slice(PLUGINS.length).split(sep);
  return rest.length ? { id, rest: rest.join("/") } : null;
}

const CONTRACT = /^contract(\.js|\.ts)?$/;
const INDEX = /^index(\.js|\.ts)?$/;

export const pluginBoundaries = {
  meta: {
    type: "problem",
    docs: { description: "A plugin imports another plugin only through its contract.ts" },
    messages: {
      internals: 'plugin "{{from}}" imports "{{source}}", inside plugin "{{to}}": import from "{{to}}"\'s contract.ts instead (and list "{{to}}" in dependsOn)',
    },
    schema: [],
  },
  create(context) {
    const root = context.cwd;
    const file = relative(root, context.filename);
    const from = inPlugin(file);
    if (!from) return {};
    const isTest = file.split(sep).includes("test");
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== "string" || !source.startsWith(".")) return;
      const to = inPlugin(relative(root, resolve(dirname(context.filename), source)));
      if (!to || to.id === from.id) return;
      if (CONTRACT.test(to.rest) || (isTest && INDEX.test(to.rest))) return;
      context.report({ node: node.source, messageId: "internals", data: { from: from.id, to: to.id, source } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { rules: { "plugin-boundaries": pluginBoundaries } };
