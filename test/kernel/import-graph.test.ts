/**
 * The import graph of the kernel and the built-in plugins, read from the sources: no file reaches itself through its
 * imports (type imports included: a circle of types still ties the files into one unit), and core keeps its layers (the
 * kernel and the CLI at the top, errors, paths, logging, config and the utilities at the bottom).
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { ROOT } from "../support/spawnKernel.js";

/** The non-test TypeScript sources under `dir` (web apps and fixtures excluded: they are built apart). */
function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (["node_modules", "dist", "test", "web", "testing"].includes(e.name)) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) sources(path, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The project files a source imports (static, dynamic, re-exports and `import("…")` types), resolved to paths. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const add = (spec: string) => {
    if (!spec.startsWith(".")) return;
    const base = resolve(dirname(file), spec).replace(/\.js$/, "");
    const path = [`${base}.ts`, join(base, "index.ts")].find((p) => existsSync(p));
    if (path) found.push(path);
  };
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Strongly connected components of more than one file (Tarjan), each as sorted project-relative paths. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(ROOT, w));
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

const files = [...sources(join(ROOT, "core")), ...sources(join(ROOT, "plugins"))];
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe("the import graph", () => {
  it("reads every source file and its imports", () => {
    expect(files.length).toBeGreaterThan(300);
    expect(graph.get(join(ROOT, "core", "index.ts"))).toContain(join(ROOT, "core", "errors.ts"));
  });

  it("has no circle", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("finds a circle when there is one", () => {
    const [a, b, c] = ["a.ts", "b.ts", "c.ts"].map((n) => join(ROOT, n));
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  /** core's layer of a file: its folder (or the file's own name at core's top). */
  const layer = (path: string) => relative(join(ROOT, "core"), path).split(sep)[0].replace(/\.ts$/, "");
  const TOP = new Set(["kernel", "cli", "main", "index"]);
  const BOTTOM = new Set(["errors", "paths", "runtime", "util", "logging", "config"]);

  it("keeps core's layers: only the top imports the kernel and the CLI; the bottom imports only the bottom", () => {
    const against: string[] = [];
    for (const [file, imports] of graph) {
      if (!file.startsWith(join(ROOT, "core") + sep)) continue;
      const from = layer(file);
      for (const target of imports) {
        const to = layer(target);
        if (from === to) continue;
        if ((TOP.has(to) && !TOP.has(from)) || (BOTTOM.has(from) && !BOTTOM.has(to))) against.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
      }
    }
    expect(against).toEqual([]);
  });

  it("has plugins reach core only through its public API (nms-core, and nms-core/worker for worker threads)", () => {
    const publicApi = new Set(["index.ts", "worker.ts"].map((f) => join(ROOT, "core", f)));
    const past = [...graph]
      .filter(([file]) => file.startsWith(join(ROOT, "plugins") + sep))
      .flatMap(([file, imports]) =>
        imports.filter((t) => t.startsWith(join(ROOT, "core") + sep) && !publicApi.has(t)).map((t) => `${relative(ROOT, file)} -> ${relative(ROOT, t)}`),
      );
    expect(past).toEqual([]);
  });
});
