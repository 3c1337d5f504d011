// ESLint rule "nms/plugin-boundaries": a plugin reaches another plugin only through that plugin's contract
// (plugins/<id>/contract.ts), and only one its manifest lists in dependsOn or optionalDependsOn. Tests may also
// import another plugin's index, for its manifest, to boot a kernel with it, and need not declare it.
// See docs/plugins.md#contracts and docs/adr/0006-plugin-platform.md.
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const PLUGINS = `plugins${sep}`;

/** The plugin folder a path (relative to the project root) lies in, and the rest of the path. */
function inPlugin(rel) {
  if (!rel.startsWith(PLUGINS)) return null;
  const [id, ...rest] = rel.slice(PLUGINS.length).split(sep);
  return rest.length ? { id, rest: rest.join("/") } : null;
}

const CONTRACT = /^contract(\.js|\.ts)?$/;

/**
 * The plugin ids a built-in plugin's manifest (plugins/<id>/index.ts) lists in dependsOn and optionalDependsOn, read
 * from its source text: the keys of those two object literals. Cached per lint run.
 */
const declared = new Map();
function declaredDependencies(root, id) {
  const key = `${root}\0${id}`;
  if (!declared.has(key)) {
    let text = "";
    try {
      text = readFileSync(join(root, "plugins", id, "index.ts"), "utf8");
    } catch {
      // no manifest file: nothing declared
    }
    const ids = new Set();
    for (const [, body] of text.matchAll(/\b(?:optionalDependsOn|dependsOn)\s*:\s*\{([^}]*)\}/g)) {
      for (const [, bare, quoted] of body.matchAll(/(?:^|,)\s*(?:([a-z][a-z0-9-]*)|"([a-z][a-z0-9-]*)")\s*:/g)) ids.add(bare ?? quoted);
    }
    declared.set(key, ids);
  }
  return declared.get(key);
}
const INDEX = /^index(\.js|\.ts)?$/;

export const pluginBoundaries = {
  meta: {
    type: "problem",
    docs: { description: "A plugin imports another plugin only through its contract.ts" },
    messages: {
      internals: 'plugin "{{from}}" imports "{{source}}", inside plugin "{{to}}": import from "{{to}}"\'s contract.ts instead (and list "{{to}}" in dependsOn)',
      undeclared: 'plugin "{{from}}" imports "{{source}}" of plugin "{{to}}", which its manifest lists in neither dependsOn nor optionalDependsOn',
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
      if (isTest && INDEX.test(to.rest)) return;
      if (!CONTRACT.test(to.rest)) {
        context.report({ node: node.source, messageId: "internals", data: { from: from.id, to: to.id, source } });
      } else if (!isTest && !declaredDependencies(root, from.id).has(to.id)) {
        context.report({ node: node.source, messageId: "undeclared", data: { from: from.id, to: to.id, source } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { rules: { "plugin-boundaries": pluginBoundaries } };
