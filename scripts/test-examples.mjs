// Builds and tests each example plugin under examples/ as its own package, against this checkout
// (each depends on "nms-core": "file:../.."), the way a third party builds and tests a plugin.
// Run by `npm test` after the kernel is built.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const examples = fileURLToPath(new URL("../examples/", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function run(dir, args) {
  const res = spawnSync(npm, args, { cwd: dir, stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "" } });
  return res.status === 0;
}

let failed = 0;
for (const name of readdirSync(examples).sort()) {
  const dir = join(examples, name);
  if (!existsSync(join(dir, "package.json"))) continue;
  console.log(`examples/${name}: npm install, npm test`);
  if (!run(dir, ["install", "--no-audit", "--no-fund", "--loglevel=error"]) || !run(dir, ["test"])) {
    console.error(`examples/${name}: failed`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
