import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/** The project root: the folder holding this package's package.json (works from core/ and from dist/core/). */
export function projectRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "nms-core") {
      root = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the nms-core package root");
    dir = parent;
  }
}

export function kernelVersion(): string {
  return (JSON.parse(readFileSync(join(projectRoot(), "package.json"), "utf8")) as { version: string }).version;
}
