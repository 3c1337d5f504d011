/**
 * What the bundle commands' progress bar is fed: one call per table done, counting up to the number of tables (every
 * table for an export, those the bundle carries for an import). The bar itself draws only on a terminal.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleCommand } from "../../core/bundle/cli.js";
import { loadConfig } from "../../core/config/Config.js";
import { commandEnvironment } from "../../core/kernel/Kernel.js";
import { createTestDatabase } from "../support/db.js";
import { ROOT } from "../support/spawnKernel.js";

const dir = mkdtempSync(join(tmpdir(), "nms-bundle-progress-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("reports each table of an export and of an import", async () => {
  const db = await createTestDatabase();
  const plugins = ["inventory", "polling", "alerts"].map((p) => join(ROOT, "plugins", p));
  const config = loadConfig({}, { databaseUrl: db, dataDir: join(dir, "data"), builtinPlugins: false, plugins });
  const file = join(dir, "bundle.json");
  const exported: [number, number, string][] = [];
  const writeErr = process.stderr.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    expect(
      await bundleCommand(
        config,
        ["export", file],
        () => commandEnvironment(config),
        (...a) => void exported.push(a),
      ),
    ).toBe(0);
  } finally {
    process.stderr.write = writeErr;
  }
  const total = exported[0][1];
  expect(exported.map(([done]) => done)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  expect(exported.every(([, t]) => t === total)).toBe(true);
  expect(exported.map(([, , table]) => table)).toEqual(expect.arrayContaining(["nodes", "node_groups", "thresholds"]));
  expect(Object.keys(JSON.parse(readFileSync(file, "utf8")) as object)).toEqual(expect.arrayContaining(exported.map(([, , t]) => t)));

  const imported: [number, number, string][] = [];
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    expect(
      await bundleCommand(
        config,
        ["import", file, "--dry-run"],
        () => commandEnvironment(config),
        (...a) => void imported.push(a),
      ),
    ).toBe(0);
  } finally {
    process.stdout.write = write;
  }
  expect(imported.length).toBeGreaterThan(0);
  expect(imported.map(([done]) => done)).toEqual(Array.from({ length: imported.length }, (_, i) => i + 1));
  expect(imported.every(([, t]) => t === imported.length)).toBe(true);
}, 120000);
