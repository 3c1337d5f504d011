/**
 * `nms bundle export <file>` and `nms bundle import <file> [--dry-run] [--mode]`: the command's code in this process
 * (the built CLI's dispatch only adds argument parsing), offline on a test database, with the plugins as configured.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BundleUsageError, bundleCommand as command } from "../../core/bundle/cli.js";
import { commandEnvironment } from "../../core/kernel/Kernel.js";
import { loadConfig, type KernelConfig } from "../../core/config/Config.js";
import { ApiError } from "../../core/index.js";
import { analysisPlugin } from "../../plugins/analysis/index.js";
import { ROOT } from "../support/spawnKernel.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { BUNDLE_PLUGINS, exportBundle, must, tableCounts, type Bundle, type Outcome } from "./support.js";

/** The command as the CLI runs it, with the plugins the kernel loads for `config`. */
const bundleCommand = (config: KernelConfig, args: string[]) => command(config, args, () => commandEnvironment(config));

const PLUGIN_DIRS = ["inventory", "polling", "alerts", "events", "notifications", "flows", "forwarding", "analysis"].map((p) => join(ROOT, "plugins", p));
const dir = mkdtempSync(join(tmpdir(), "nms-bundle-cli-"));
let k: TestKernel | undefined;

afterEach(async () => {
  await k?.stop();
  k = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFor(t: TestKernel): KernelConfig {
  return loadConfig({}, { databaseUrl: t.databaseUrl, dataDir: t.dataDir, builtinPlugins: false, plugins: PLUGIN_DIRS });
}

/** Runs the command, giving its exit code and what it printed on stdout. */
async function run(config: KernelConfig, args: string[]): Promise<{ code: number; out: string }> {
  const printed: string[] = [];
  const write = process.stdout.write;
  const writeErr = process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    printed.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    return { code: await bundleCommand(config, args), out: printed.join("") };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
}

it("exports what the API exports, and imports it into a fresh database (dry run first); usage errors and refused bundles", async () => {
  k = await startTestKernel({ plugins: [...BUNDLE_PLUGINS, analysisPlugin] });
  const folder = (await must(k, "POST", "/node-groups", { name: "CLI folder", tags: ["cli"] })).id as string;
  await must(k, "POST", "/nodes", { name: "cli-node", address: "192.0.2.77", group_id: folder });
  await must(k, "POST", "/thresholds", { metric: "cpu_util", scope_level: "folder", direction: "above", scope_ids: [folder], warning: 1, critical: 2 });
  await must(k, "POST", "/analysis/schedules", { tool: "flapping", scope_kind: "folder", scope_id: folder, frequency: "daily", at_hour: 5, at_minute: 0 });
  const file = join(dir, "bundle.json");
  expect((await run(configFor(k), ["export", file])).code).toBe(0);
  const written = JSON.parse(readFileSync(file, "utf8")) as Bundle;
  const viaApi = (await exportBundle(k)).bundle;
  const { exported_at: _a, ...fromCli } = written;
  const { exported_at: _b, ...fromApi } = viaApi;
  expect(fromCli).toEqual(fromApi);
  expect((written.nodes as unknown[]).length).toBe(1);
  // A table whose functions use the plugin's services (ctx.get) works offline too.
  expect((written.analysis_schedules as unknown[]).length).toBe(1);

  await expect(bundleCommand(configFor(k), ["export"])).rejects.toBeInstanceOf(BundleUsageError);
  await expect(bundleCommand(configFor(k), ["import", file, "--mode", "upsert"])).rejects.toBeInstanceOf(BundleUsageError);
  await expect(bundleCommand(configFor(k), ["frobnicate", file])).rejects.toBeInstanceOf(BundleUsageError);
  await k.stop();

  k = await startTestKernel({ plugins: [...BUNDLE_PLUGINS, analysisPlugin] });
  const config = configFor(k);
  const before = await tableCounts(k);
  const dry = await run(config, ["import", file, "--dry-run"]);
  expect(dry.code).toBe(0);
  expect((JSON.parse(dry.out) as Outcome).tables.nodes.created).toBe(1);
  expect(await tableCounts(k)).toEqual(before);
  const real = await run(config, ["import", file, "--mode", "replace"]);
  expect(real.code).toBe(0);
  const outcome = JSON.parse(real.out) as Outcome;
  expect(outcome).toMatchObject({ ok: true, dry_run: false, mode: "replace" });
  expect(outcome.tables.thresholds.created).toBe(1);
  expect(outcome.tables.analysis_schedules.created).toBe(1);
  const { exported_at: _c, notes: _n1, ...again } = (await exportBundle(k)).bundle;
  const { notes: _n2, ...expected } = fromApi;
  expect(again).toEqual(expected);

  const other = join(dir, "other.json");
  writeFileSync(other, JSON.stringify({ ...written, format: "something.else" }));
  await expect(bundleCommand(config, ["import", other])).rejects.toMatchObject({ code: "bundle_format_unsupported" });
  await expect(bundleCommand(config, ["import", other])).rejects.toBeInstanceOf(ApiError);
}, 120000);
