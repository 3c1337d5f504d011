/**
 * The build's first step (scripts/prune-dist.mjs) removes from dist/ what no longer has a source: a renamed module or
 * migration left behind would be loaded on the next start. It keeps what has a source and vite's dashboard bundle.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const script = join(process.cwd(), "scripts/prune-dist.mjs");

test("removes the compiled files and assets whose source is gone, and keeps the rest", () => {
  const root = mkdtempSync(join(tmpdir(), "nms-prune-"));
  const put = (rel: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), "x");
  };
  try {
    for (const src of ["core/a.ts", "plugins/p/migrations/0001_init.sql", "plugins/p/index.ts"]) put(src);
    const kept = [
      "dist/core/a.js",
      "dist/core/a.d.ts",
      "dist/core/a.js.map",
      "dist/plugins/p/migrations/0001_init.sql",
      "dist/plugins/p/index.js",
      "dist/plugins/dashboard/web/assets/index-1.js",
      "dist/test/fixture.js",
    ];
    const gone = ["dist/core/old.js", "dist/core/old.d.ts", "dist/plugins/p/migrations/0002_renamed.sql", "dist/plugins/q/index.js"];
    for (const f of [...kept, ...gone]) put(f);
    const res = spawnSync(process.execPath, [script, root], { encoding: "utf8" });
    expect(res.status).toBe(0);
    expect(res.stdout).toContain("removed 4 file(s)");
    for (const f of kept) expect([f, existsSync(join(root, f))]).toEqual([f, true]);
    for (const f of gone) expect([f, existsSync(join(root, f))]).toEqual([f, false]);
    // A folder left empty goes too.
    expect(existsSync(join(root, "dist/plugins/q"))).toBe(false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
