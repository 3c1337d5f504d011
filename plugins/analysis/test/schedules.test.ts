import { randomUUID } from "node:crypto";
import type { BundleImportContext, BundleNote, BundleNoteCode } from "../../../core/index.js";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { nextRun } from "../../../core/index.js";
import { analysisPlugin } from "../index.js";
import { jobFindings, seed, type Fixture } from "./fixtures.js";

let k: TestKernel;
let fx: Fixture;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, analysisPlugin] });
  fx = await seed(k);
}, 120000);

afterAll(async () => {
  await k?.stop();
});

const BASE = "/analysis/schedules";
const daily = (over: Record<string, unknown> = {}) => ({ tool: "silent_nodes", scope_kind: "all", frequency: "daily", at_hour: 6, at_minute: 15, ...over });
const create = async (body: object, token = k.adminToken) => {
  const res = await k.request("POST", BASE, { token, body });
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { id: expect.any(String) } });
  return (res.body as { id: string }).id;
};
interface Schedule {
  id: string;
  tool: string;
  scope_kind: string;
  scope_label: string;
  scope_id: string | null;
  params: Record<string, unknown>;
  frequency: string;
  at_hour: number;
  at_minute: number;
  day_of_week: number | null;
  day_of_month: number | null;
  enabled: boolean;
  timezone: string;
  next_run_at: string | null;
  last_run_at: string | null;
}
const get = async (id: string, token = k.adminToken) => (await k.request("GET", `${BASE}/${id}`, { token })).body as Schedule;

describe("schedule CRUD", () => {
  test("create, get, list, replace, delete; next run computed in the zone; params get defaults", async () => {
    const id = await create(daily({ timezone: "Europe/Berlin", params: { hours: 12 } }));
    const s = await get(id);
    expect(s).toEqual({
      id,
      tool: "silent_nodes",
      scope_kind: "all",
      scope_label: "All",
      scope_id: null,
      params: { hours: 12, criticalHours: 72, lookbackDays: 30 },
      frequency: "daily",
      at_hour: 6,
      at_minute: 15,
      day_of_week: null,
      day_of_month: null,
      enabled: true,
      timezone: "Europe/Berlin",
      next_run_at: expect.stringMatching(/Z$/),
      last_run_at: null,
    });
    const expected = nextRun({ frequency: "daily", at_hour: 6, at_minute: 15, day_of_week: null, day_of_month: null, timezone: "Europe/Berlin" }, new Date());
    expect(Date.parse(s.next_run_at!)).toBe(expected.getTime());
    expect(((await k.request("GET", BASE)).body as Schedule[]).map((x) => x.id)).toContain(id);

    const put = await k.request("PUT", `${BASE}/${id}`, {
      body: { tool: "flapping", scope_kind: "folder", scope_id: fx.folders.siteA, frequency: "weekly", at_hour: 23, at_minute: 0, day_of_week: 0 },
    });
    expect({ status: put.status, body: put.body }).toEqual({ status: 200, body: { ok: true } });
    const after = await get(id);
    expect(after).toMatchObject({
      tool: "flapping",
      scope_kind: "folder",
      scope_id: fx.folders.siteA,
      scope_label: "Site A",
      day_of_week: 0,
      timezone: "Europe/Berlin",
    });
    expect(new Date(after.next_run_at!).getUTCDay()).toBe(0); // 23:00 Berlin on a Sunday is 22:00 UTC on that Sunday

    const off = await k.request("PUT", `${BASE}/${id}`, { body: daily({ enabled: false, scope_label: "nightly" }) });
    expect(off.status).toBe(200);
    expect(await get(id)).toMatchObject({ enabled: false, next_run_at: null, scope_label: "nightly" });

    // A day field of another frequency is ignored.
    expect((await k.request("PUT", `${BASE}/${id}`, { body: daily({ day_of_week: 3, day_of_month: 4 }) })).status).toBe(200);
    expect(await get(id)).toMatchObject({ frequency: "daily", day_of_week: null, day_of_month: null });

    expect((await k.request("DELETE", `${BASE}/${id}`)).body).toEqual({ ok: true });
    expectError(await k.request("GET", `${BASE}/${id}`), 404, "not_found");
    expectError(await k.request("DELETE", `${BASE}/${id}`), 404, "not_found");
    expectError(await k.request("PUT", `${BASE}/${randomUUID()}`, { body: daily() }), 404, "not_found");
  });

  test("bad bodies are 400 with stable codes and write nothing", async () => {
    const count = async () => ((await k.request("GET", BASE)).body as Schedule[]).length;
    const before = await count();
    const bad: [object, number, string][] = [
      [daily({ tool: "nope" }), 400, "unknown_tool"],
      [daily({ params: { hours: -1 } }), 400, "invalid_params"],
      [daily({ timezone: "Mars/Olympus" }), 400, "invalid_timezone"],
      [daily({ frequency: "hourly" }), 400, "validation_failed"],
      [daily({ at_hour: 24 }), 400, "validation_failed"],
      [daily({ at_minute: -1 }), 400, "validation_failed"],
      [daily({ frequency: "weekly" }), 400, "invalid_schedule"],
      [daily({ frequency: "monthly" }), 400, "invalid_schedule"],
      [daily({ frequency: "monthly", day_of_month: 32 }), 400, "validation_failed"],
      [daily({ day_of_week: 7 }), 400, "validation_failed"],
      [daily({ scope_kind: "node" }), 400, "validation_failed"],
      [daily({ scope_kind: "node", scope_id: randomUUID() }), 404, "not_found"],
      [daily({ extra: 1 }), 400, "validation_failed"],
      [daily({ params: { hours: 24, pad: "x".repeat(300 * 1024) } }), 413, "document_too_large"],
    ];
    for (const [body, status, code] of bad) expectError(await k.request("POST", BASE, { body }), status, code);
    expect(await count()).toBe(before);
  });

  test("permissions: read for lists, ManageConfig for writes; scoped callers see and write only within their folders", async () => {
    const adminSchedule = await create(daily());
    const siteASchedule = await create(daily({ scope_kind: "folder", scope_id: fx.folders.siteA }));
    const viewer = await k.session("viewer");
    const operatorToken = await k.token("operator");
    const scoped = await k.session("operator", { folders: [fx.folders.rackA1] });
    for (const [method, path, body] of [
      ["POST", BASE, daily()],
      ["PUT", `${BASE}/${adminSchedule}`, daily()],
      ["DELETE", `${BASE}/${adminSchedule}`, undefined],
    ] as const) {
      expectError(await k.request(method, path, { token: null, body }), 401, "unauthorized");
      expectError(await k.request(method, path, { token: "bad-token", body }), 401, "unauthorized");
      expectError(await k.request(method, path, { token: viewer, body }), 403, "permission_denied");
    }
    expectError(await k.request("GET", BASE, { token: null }), 401, "unauthorized");
    expect((await k.request("GET", BASE, { token: viewer })).status).toBe(200);
    expect((await k.request("PUT", `${BASE}/${adminSchedule}`, { token: operatorToken, body: daily({ at_hour: 7 }) })).status).toBe(200);
    // A scoped operator: the folder above its own is 404; scope all is its folders; it sees only its own schedules.
    expectError(await k.request("POST", BASE, { token: scoped, body: daily({ scope_kind: "folder", scope_id: fx.folders.siteA }) }), 404, "not_found");
    const mine = await create(daily({ scope_kind: "folder", scope_id: fx.folders.rackA1 }), scoped);
    const mineAll = await create(daily(), scoped);
    const listed = ((await k.request("GET", BASE, { token: scoped })).body as Schedule[]).map((s) => s.id).sort();
    expect(listed).toEqual([mine, mineAll].sort());
    expectError(await k.request("GET", `${BASE}/${siteASchedule}`, { token: scoped }), 404, "not_found");
    expectError(await k.request("PUT", `${BASE}/${adminSchedule}`, { token: scoped, body: daily() }), 404, "not_found");
    expectError(await k.request("DELETE", `${BASE}/${siteASchedule}`, { token: scoped }), 404, "not_found");
    expect((await get(mine)).scope_label).toBe("Rack A1");
  });
});

describe("a schedule fires", () => {
  test("at its minute in its zone, through Agenda: a job of the schedule with findings, and the next run moves on", async () => {
    // The next whole minute at least 20 s away, as a wall time in Kolkata (UTC+05:30).
    const fire = new Date(Math.ceil((Date.now() + 20000) / 60000) * 60000);
    const wall = new Date(fire.getTime() + 330 * 60000);
    const id = await create({
      tool: "silent_nodes",
      scope_kind: "folder",
      scope_id: fx.folders.siteA,
      frequency: "daily",
      at_hour: wall.getUTCHours(),
      at_minute: wall.getUTCMinutes(),
      timezone: "Asia/Kolkata",
    });
    expect((await get(id)).next_run_at).toBe(fire.toISOString().replace(".000Z", ".000000Z"));
    const store = k.context("analysis").store;
    const job = await until(
      "the scheduled run",
      async () =>
        (await store.query<{ id: string; status: string }>(`SELECT id, status FROM analysis.jobs WHERE schedule_id = $1 AND status = 'succeeded'`, [id]))
          .rows[0],
      110000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(fire.getTime());
    expect(Object.fromEntries((await jobFindings(k, job.id)).map((f) => [f.subject.name, f.severity]))).toEqual({ a4: "warning", a5: "critical" });
    const after = await get(id);
    expect(after.last_run_at).not.toBeNull();
    expect(Date.parse(after.next_run_at!)).toBe(fire.getTime() + 86400000);
    expect((await k.request("GET", `/analysis/jobs/${job.id}`)).body).toMatchObject({ schedule_id: id, status: "succeeded", progress: 1 });
  }, 150000);
});

describe("bundle table analysis_schedules", () => {
  const table = analysisPlugin.bundle!.tables[0];
  const ctx = () => k.context("analysis");

  async function importRows(rows: unknown[], mode: "merge" | "replace" = "merge", dryRun = false) {
    const notes: BundleNote[] = [];
    const result = await ctx().store.tx(async (client) => {
      const imp: BundleImportContext = {
        client,
        mode,
        dryRun,
        note(code: BundleNoteCode, count = 1, field: string | null = null) {
          const n = notes.find((x) => x.code === code && x.field === field);
          if (n) n.count += count;
          else notes.push({ table: "analysis_schedules", code, count, field });
        },
      };
      return table.import!(ctx(), rows, imp);
    });
    return { result, notes };
  }

  test("export carries exactly the record's fields; import round-trips them, recomputes next runs and notes what it skipped", async () => {
    const exported = (await table.export(ctx())) as Record<string, unknown>[];
    expect(exported.length).toBeGreaterThan(0);
    for (const row of exported) {
      expect(Object.keys(row).sort()).toEqual(
        ["id", "tool", "scope_kind", "scope_label", "scope_id", "params", "frequency", "at_hour", "at_minute", "day_of_week", "day_of_month", "enabled"].sort(),
      );
    }
    // Replace with what was exported plus a new one, and rows that cannot be imported.
    const fresh = { ...exported[0], id: randomUUID(), scope_kind: "node", scope_id: fx.nodes.a3, scope_label: "a3", frequency: "monthly", day_of_month: 31 };
    const rows = [
      ...exported,
      fresh,
      { ...exported[0], id: randomUUID(), tool: "retired_tool" },
      { ...exported[0], id: randomUUID(), params: { hours: "many" } },
      { ...exported[0], id: randomUUID(), frequency: "weekly", day_of_week: null },
      { ...exported[0], id: randomUUID(), scope_kind: "folder", scope_id: randomUUID() },
      { ...exported[0], id: randomUUID(), scope_kind: "node", scope_id: randomUUID() },
    ];
    await ctx().store.query(`UPDATE analysis.schedules SET next_run_at = '2000-01-01T00:00:00Z' WHERE enabled`);
    const { result, notes } = await importRows(rows, "replace");
    expect(result).toEqual({ created: 1, updated: exported.length, skipped: 5, deleted: 0 });
    expect(notes.sort((a, b) => `${a.code}${a.field}`.localeCompare(`${b.code}${b.field}`))).toEqual([
      { table: "analysis_schedules", code: "schedule_next_run_recomputed", count: exported.length + 1, field: null },
      { table: "analysis_schedules", code: "skipped_invalid_value", count: 1, field: "day_of_week" },
      { table: "analysis_schedules", code: "skipped_invalid_value", count: 1, field: "params" },
      { table: "analysis_schedules", code: "skipped_invalid_value", count: 1, field: "tool" },
      { table: "analysis_schedules", code: "skipped_missing_reference", count: 2, field: "scope_id" },
    ]);
    const stale = await ctx().store.query(`SELECT id FROM analysis.schedules WHERE enabled AND next_run_at < now()`);
    expect(stale.rows).toEqual([]);
    const again = (await table.export(ctx())) as Record<string, unknown>[];
    const byId = (list: Record<string, unknown>[]) => [...list].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(byId(again)).toEqual(byId([...exported, { ...fresh, params: { hours: 24, criticalHours: 72, lookbackDays: 30 } }]));
    const imported = await get(fresh.id as string);
    expect(imported).toMatchObject({ scope_kind: "node", scope_id: fx.nodes.a3, day_of_month: 31, timezone: "UTC" });

    // Replace without the new one deletes it; merge keeps what the bundle does not name.
    expect((await importRows(exported, "merge")).result).toMatchObject({ created: 0, updated: exported.length, deleted: 0 });
    expect((await importRows(exported, "replace")).result).toMatchObject({ deleted: 1 });
    expectError(await k.request("GET", `${BASE}/${fresh.id}`), 404, "not_found");
  });

  test("an older row without params or scope_label takes the defaults", async () => {
    const id = randomUUID();
    const { result } = await importRows([
      {
        id,
        tool: "error_hotspots",
        scope_kind: "folder",
        scope_id: fx.folders.siteB,
        frequency: "daily",
        at_hour: 1,
        at_minute: 2,
        day_of_week: null,
        day_of_month: null,
        enabled: true,
      },
    ]);
    expect(result).toEqual({ created: 1, updated: 0, skipped: 0, deleted: 0 });
    expect(await get(id)).toMatchObject({ scope_label: "Site B", params: { windowHours: 24, top: 50 } });
  });
});
