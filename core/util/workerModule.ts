import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { projectRoot } from "../paths.js";

/**
 * The URL of a compiled module to run in a worker thread: `rel` (a `.js` path) beside the calling module (`from`, its
 * import.meta.url). Run from dist/ that is the file itself; run from the TypeScript sources (the test suite, which
 * builds dist/ first) it is the same path under dist/, since a worker thread loads JavaScript only.
 */
export function compiledModuleUrl(rel: string, from: string): URL {
  const url = new URL(rel, from);
  const path = fileURLToPath(url);
  if (existsSync(path)) return url;
  const root = projectRoot();
  const inRoot = relative(root, path);
  if (!inRoot.startsWith("..")) {
    const built = join(root, "dist", inRoot);
    if (existsSync(built)) return pathToFileURL(built);
  }
  throw new Error(`compiled module not found: ${path} (run npm run build)`);
}
