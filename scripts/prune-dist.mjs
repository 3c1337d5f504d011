// Removes from dist/core and dist/plugins what no longer has a source: tsc and copy-assets.mjs only ever add files, so a
// renamed or deleted module, and above all a renamed or deleted migration, would otherwise stay in dist/ and be loaded
// (a stale migration file breaks the next start). The dashboard bundle (dist/plugins/dashboard/web) is vite's: it
// empties that folder itself. Usage: node scripts/prune-dist.mjs [root] (default: this repository).
import { existsSync, readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
const VITE_OUT = join(dist, "plugins", "dashboard", "web");

/** The source files a file of dist/ may come from (relative to the root): a module's .ts, or an asset itself. */
function sources(rel) {
  const module = /^(.*?)(\.d\.ts|\.js)(\.map)?$/.exec(rel);
  return module ? [`${module[1]}.ts`] : [rel];
}

let removed = 0;
/** Prunes `dir` (a folder of dist/); true when it is empty afterwards. */
function prune(dir) {
  let left = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path === VITE_OUT) {
      left++;
      continue;
    }
    if (statSync(path).isDirectory()) {
      if (prune(path)) rmdirSync(path);
      else left++;
      continue;
    }
    const rel = relative(dist, path);
    if (sources(rel).some((s) => existsSync(join(root, s)))) left++;
    else {
      rmSync(path);
      removed++;
    }
  }
  return left === 0;
}

for (const top of ["core", "plugins"]) if (existsSync(join(dist, top))) prune(join(dist, top));
if (removed > 0) console.log(`prune-dist: removed ${removed} file(s) of dist/ without a source`);
