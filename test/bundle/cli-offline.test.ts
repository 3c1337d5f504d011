/**
 * `nms bundle` with no service in the process at all (this file starts no kernel, so Ts.ED's injector is the command's
 * own, as in the CLI's process): a fresh database is migrated by the command, and a bundle with an analysis schedule
 * (a table whose import uses the plugin's services) is imported. One command per process, as the CLI runs it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleCommand as command } from "../../core/bundle/cli.js";
import { commandEnvironment } from "../../core/kernel/Kernel.js";
import { loadConfig, type KernelConfig } from "../../core/config/Config.js";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { ROOT } from "../support/spawnKernel.js";
import { bundleOf } from "./support.js";

/** The command as the CLI runs it, with the plugins the kernel loads for `config`. */
const bundleCommand = (config: KernelConfig, args: string[]) => command(config, args, () => commandEnvironment(config));

const PLUGIN_DIRS = ["inventory", "polling", "alerts", "events", "analysis"].map((p) => join(ROOT, "plugins", p));
const dir = mkdtempSync(join(tmpdir(), "nms-bundle-offline-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("imports into a database no service has touched, the plugins' services built on demand", async () => {
  const db = await createTestDatabase();
  const config = loadConfig({}, { databaseUrl: db, dataDir: join(dir, "data"), builtinPlugins: false, plugins: PLUGIN_DIRS });
  const folder = randomUUID();
  const schedule = randomUUID();
  const input = join(dir, "in.json");
  writeFileSync(
    input,
    JSON.stringify(
      bundleOf({
        node_groups: [
          {
            id: folder,
            name: "Offline",
            parent_id: null,
            group_type: "folder",
            pool: null,
            latitude: null,
            longitude: null,
            sort_order: 0,
            tags: [],
            tags_excluded: [],
          },
        ],
        analysis_schedules: [
          {
            id: schedule,
            tool: "flapping",
            scope_kind: "folder",
            scope_label: "Offline",
            scope_id: folder,
            params: {},
            frequency: "daily",
            at_hour: 5,
            at_minute: 0,
            day_of_week: null,
            day_of_month: null,
            enabled: true,
          },
        ],
      }),
    ),
  );
  const write = process.stdout.write;
  const printed: string[] = [];
  process.stdout.write = ((c: string) => (printed.push(String(c)), true)) as typeof process.stdout.write;
  try {
    expect(await bundleCommand(config, ["import", input])).toBe(0);
  } finally {
    process.stdout.write = write;
  }
  const outcome = JSON.parse(printed.join("")) as { tables: Record<string, { created: number }> };
  expect(outcome.tables.node_groups.created).toBe(1);
  expect(outcome.tables.analysis_schedules.created).toBe(1);
  expect(await rawQuery(db, "SELECT id::text FROM analysis.schedules")).toEqual([{ id: schedule }]);
}, 120000);
