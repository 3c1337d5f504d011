import { Controller } from "@tsed/di";
import { Get, Returns } from "@tsed/schema";
import { Permission } from "../../core/auth/decorators.js";
import { definePlugin } from "../../core/pluginhost/manifest.js";
import { fixtureAuditPlugin, seen } from "../fixtures/plugins/audit/index.js";
import { fixtureWidgetsPlugin, lifecycle } from "../fixtures/plugins/widgets/index.js";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";

describe("plugin host", () => {
  let k: TestKernel;
  const auth = () => ({ Authorization: `Bearer ${k.adminToken}` });

  beforeAll(async () => {
    lifecycle.length = 0;
    // Given in reverse order on purpose: the host must start the dependency first.
    k = await startTestKernel({ plugins: [fixtureAuditPlugin, fixtureWidgetsPlugin] });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("starts plugins in dependency order", () => {
    expect(lifecycle).toEqual(["start:fixture-widgets", "start:fixture-audit"]);
  });

  it("applies each plugin's migrations in its own schema and records them", async () => {
    const tables = await rawQuery<{ table_name: string }>(
      k.databaseUrl!,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'fixture_widgets' ORDER BY 1",
    );
    expect(tables.map((t) => t.table_name)).toEqual(["job_runs", "widgets"]);
    const ledger = await rawQuery<{ plugin: string; name: string }>(k.databaseUrl!, "SELECT plugin, name FROM core.migrations ORDER BY plugin, name");
    expect(ledger).toEqual([
      { plugin: "core", name: "0001_auth" },
      { plugin: "core", name: "0002_socket_io_attachments" },
      { plugin: "core", name: "0003_bootstrap_flag" },
      { plugin: "core", name: "0004_dead_letters" },
      { plugin: "core", name: "0005_login_failures" },
      { plugin: "core", name: "0006_auth_epoch" },
      { plugin: "core", name: "0010_partition_inbox" },
      { plugin: "core", name: "0011_partition_inbox_text" },
      { plugin: "fixture-widgets", name: "0001_init" },
    ]);
  });

  it("carries bus events from one plugin to another", async () => {
    const res = await k.http.post("/api/v1/widgets").set(auth()).send({ name: "bus-check" });
    expect(res.status).toBe(201);
    expect(seen).toContainEqual({ id: res.body.id, name: "bus-check" });
  });

  it("defines jobs as <id>.<name> and runs them", async () => {
    const res = await k.http.post("/api/v1/widgets/jobs/tick").set(auth());
    expect(res.status).toBe(200);
    const run = await until("the job run", async () => (await rawQuery(k.databaseUrl!, "SELECT data FROM fixture_widgets.job_runs"))[0], 8000);
    expect(run.data).toEqual({ n: 1 });
    const jobs = await rawQuery<{ name: string }>(k.databaseUrl!, "SELECT DISTINCT name FROM nms_agenda_jobs");
    expect(jobs.map((j) => j.name)).toContain("fixture-widgets.tick");
  });

  it("gives each plugin its validated config with schema defaults, and the extension items contributed to it", () => {
    const ctx = k.kernel.context("fixture-widgets")!;
    expect(ctx.config).toEqual({ greeting: "hello" });
    expect(ctx.extensions.get("fixture-widgets.shapes")).toEqual([{ shape: "circle" }, { shape: "square" }]);
  });

  it("lists plugins in health", async () => {
    const res = await k.http.get("/api/v1/health");
    expect(res.status).toBe(200);
    expect(res.body.plugins).toEqual([
      { id: "fixture-widgets", version: "1.0.0" },
      { id: "fixture-audit", version: "1.0.0" },
    ]);
  });

  it("stops plugins in reverse order", async () => {
    await k.stop();
    expect(lifecycle.slice(-2)).toEqual(["stop:fixture-audit", "stop:fixture-widgets"]);
  });
});

describe("plugin host refusals at boot", () => {
  it("reuses applied migrations on restart and refuses one whose text changed", async () => {
    const db = await createTestDatabase();
    const first = await startTestKernel({ databaseUrl: db, plugins: [fixtureWidgetsPlugin] });
    await first.stop();
    const again = await startTestKernel({ databaseUrl: db, plugins: [fixtureWidgetsPlugin] });
    expect(again.logs.some((l) => l.includes('"migrations applied"'))).toBe(false);
    await again.stop();
    const changed = definePlugin({ ...fixtureWidgetsPlugin, migrations: [{ name: "0001_init", up: "CREATE TABLE other (id int)" }] });
    await expect(startTestKernel({ databaseUrl: db, plugins: [changed] })).rejects.toThrow(
      'plugin "fixture-widgets": applied migration "0001_init" has changed since it ran',
    );
  });

  it("rolls back a plugin's failing migrations as a whole", async () => {
    const db = await createTestDatabase();
    const broken = definePlugin({
      id: "broken",
      version: "1.0.0",
      kernel: "^0.1.0",
      migrations: [
        { name: "0001_ok", up: "CREATE TABLE good (id int)" },
        { name: "0002_bad", up: "CREATE TABLE bad (id no_such_type)" },
      ],
    });
    await expect(startTestKernel({ databaseUrl: db, plugins: [broken] })).rejects.toThrow('plugin "broken": migration "0002_bad" failed');
    const left = await rawQuery(db, "SELECT 1 FROM information_schema.tables WHERE table_schema = 'broken'");
    expect(left).toHaveLength(0);
    const ledger = await rawQuery(db, "SELECT 1 FROM core.migrations WHERE plugin = 'broken'");
    expect(ledger).toHaveLength(0);
  });

  it("refuses invalid plugin config, naming the key", async () => {
    await expect(startTestKernel({ plugins: [fixtureWidgetsPlugin], overrides: { pluginConfig: { "fixture-widgets": { greeting: 5 } } } })).rejects.toThrow(
      'plugin "fixture-widgets": invalid configuration: "pluginConfig.fixture-widgets.greeting" must be string',
    );
  });

  it("refuses a contribution its extension point rejects", async () => {
    const bad = definePlugin({
      id: "bad-shapes",
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: { "fixture-widgets": "*" },
      contributes: { "fixture-widgets.shapes": [{ color: "red" }] },
    });
    await expect(startTestKernel({ plugins: [fixtureWidgetsPlugin, bad] })).rejects.toThrow(
      'plugin "bad-shapes": contribution to "fixture-widgets.shapes" refused: a shape needs a name',
    );
  });

  it("refuses a route that declares no access rule", async () => {
    @Controller("/open")
    class OpenController {
      @Get("/")
      @Returns(200, Object)
      open() {
        return {};
      }
    }
    const leaky = definePlugin({ id: "leaky", version: "1.0.0", kernel: "^0.1.0", controllers: [OpenController] });
    await expect(startTestKernel({ plugins: [leaky] })).rejects.toThrow('plugin "leaky": route GET /api/v1/open (open) has no access decorator');
  });

  it("refuses a route that declares no success response", async () => {
    @Controller("/vague")
    class VagueController {
      @Get("/")
      @Permission("read")
      vague() {
        return {};
      }
    }
    const vague = definePlugin({ id: "vague", version: "1.0.0", kernel: "^0.1.0", controllers: [VagueController] });
    await expect(startTestKernel({ plugins: [vague] })).rejects.toThrow('plugin "vague": route GET /api/v1/vague (vague) declares no success response');
  });

  it("refuses a plugin whose start fails, and stops those already started", async () => {
    lifecycle.length = 0;
    const failing = definePlugin({
      id: "zz-failing",
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: { "fixture-widgets": "*" },
      start: () => {
        throw new Error("cannot bind port");
      },
    });
    await expect(startTestKernel({ plugins: [fixtureWidgetsPlugin, failing] })).rejects.toThrow('plugin "zz-failing": start failed: cannot bind port');
    expect(lifecycle).toEqual(["start:fixture-widgets", "stop:fixture-widgets"]);
  });
});
