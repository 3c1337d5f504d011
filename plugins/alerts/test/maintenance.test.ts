import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import {
  MaintenanceCalendar,
  isValidTimeZone,
  occurrenceAt,
  recurrenceOccurrenceAt,
  zonedTimeToInstant,
  type MaintenanceWindowTiming,
  type Recurrence,
} from "../lib/maintenanceTime.js";
import { bearer, insertFolder, insertNode, startAlertsKernel } from "./readSupport.js";

const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => new Date(text);
const occ = (rec: Recurrence, when: string) => {
  const o = recurrenceOccurrenceAt(rec, at(when));
  return o && { start: o.start.toISOString(), end: o.end.toISOString() };
};

describe("lib/maintenanceTime: wall-clock to instant", () => {
  it.each<[string, [number, number, number, number], string, string]>([
    ["an ordinary winter time", [2024, 1, 15, 9 * 60], "America/New_York", "2024-01-15T14:00:00.000Z"],
    ["an ordinary summer time", [2024, 7, 15, 9 * 60], "America/New_York", "2024-07-15T13:00:00.000Z"],
    ["a time in the spring-forward gap moves past it", [2024, 3, 10, 2 * 60 + 30], "America/New_York", "2024-03-10T07:30:00.000Z"],
    ["the first time after the gap", [2024, 3, 10, 3 * 60], "America/New_York", "2024-03-10T07:00:00.000Z"],
    ["a time in the repeated autumn hour takes the first one", [2024, 11, 3, 60 + 30], "America/New_York", "2024-11-03T05:30:00.000Z"],
    ["Berlin's gap", [2024, 3, 31, 2 * 60 + 15], "Europe/Berlin", "2024-03-31T01:15:00.000Z"],
    ["Berlin's repeated hour", [2024, 10, 27, 2 * 60 + 30], "Europe/Berlin", "2024-10-27T00:30:00.000Z"],
    ["a southern-hemisphere zone (Auckland, summer)", [2024, 1, 15, 6 * 60], "Pacific/Auckland", "2024-01-14T17:00:00.000Z"],
    ["a half-hour zone", [2024, 6, 1, 0], "Asia/Kolkata", "2024-05-31T18:30:00.000Z"],
    ["UTC", [2024, 2, 29, 23 * 60 + 59], "UTC", "2024-02-29T23:59:00.000Z"],
  ])("%s", (_name, [y, m, d, mins], tz, want) => {
    expect(iso(zonedTimeToInstant(y, m, d, mins, tz))).toBe(want);
  });

  it("validates time zone names", () => {
    expect(isValidTimeZone("Europe/Berlin")).toBe(true);
    expect(isValidTimeZone("UTC")).toBe(true);
    expect(isValidTimeZone("Mars/Olympus_Mons")).toBe(false);
    expect(isValidTimeZone("")).toBe(false);
  });
});

describe("lib/maintenanceTime: recurring occurrences across DST", () => {
  const ny = (start: string, duration_mins: number): Recurrence => ({ kind: "daily", start, duration_mins, time_zone: "America/New_York" });

  it("keeps a daily window at its wall-clock time before and after the spring change", () => {
    const rec = ny("09:00", 60);
    expect(occ(rec, "2024-03-09T14:30:00Z")).toEqual({ start: "2024-03-09T14:00:00.000Z", end: "2024-03-09T15:00:00.000Z" });
    expect(occ(rec, "2024-03-10T13:30:00Z")).toEqual({ start: "2024-03-10T13:00:00.000Z", end: "2024-03-10T14:00:00.000Z" });
    // 14:30Z was inside the window the day before; after the change it is 10:30 local, outside.
    expect(occ(rec, "2024-03-10T14:30:00Z")).toBeNull();
  });

  it("measures duration in elapsed minutes over the spring change", () => {
    const rec = ny("01:30", 120);
    // 01:30 EST = 06:30Z; two hours later is 08:30Z = 04:30 EDT.
    expect(occ(rec, "2024-03-10T08:29:59Z")).toEqual({ start: "2024-03-10T06:30:00.000Z", end: "2024-03-10T08:30:00.000Z" });
    expect(occ(rec, "2024-03-10T08:30:00Z")).toBeNull();
  });

  it("starts a window whose start falls in the gap that far past the gap", () => {
    const rec = ny("02:30", 30);
    expect(occ(rec, "2024-03-09T07:45:00Z")).toEqual({ start: "2024-03-09T07:30:00.000Z", end: "2024-03-09T08:00:00.000Z" });
    expect(occ(rec, "2024-03-10T07:29:00Z")).toBeNull();
    expect(occ(rec, "2024-03-10T07:30:00Z")).toEqual({ start: "2024-03-10T07:30:00.000Z", end: "2024-03-10T08:00:00.000Z" });
    expect(occ(rec, "2024-03-11T06:45:00Z")).toEqual({ start: "2024-03-11T06:30:00.000Z", end: "2024-03-11T07:00:00.000Z" });
  });

  it("starts a window in the repeated autumn hour at the first occurrence, and lasts its elapsed duration", () => {
    const rec = ny("01:30", 60);
    expect(occ(rec, "2024-11-03T05:30:00Z")).toEqual({ start: "2024-11-03T05:30:00.000Z", end: "2024-11-03T06:30:00.000Z" });
    // 06:30Z is 01:30 EST, the second 01:30: the window (one elapsed hour) is over.
    expect(occ(rec, "2024-11-03T06:30:00Z")).toBeNull();
    expect(occ(rec, "2024-11-04T06:45:00Z")).toEqual({ start: "2024-11-04T06:30:00.000Z", end: "2024-11-04T07:30:00.000Z" });
  });

  it("covers a window crossing midnight and the change (Berlin, 22:00 for 4 hours)", () => {
    const rec: Recurrence = { kind: "daily", start: "22:00", duration_mins: 240, time_zone: "Europe/Berlin" };
    // 22:00 CET on 30 March = 21:00Z; four hours later 01:00Z = 03:00 CEST on the 31st (the clocks skipped 02:00-03:00).
    expect(occ(rec, "2024-03-31T00:59:00Z")).toEqual({ start: "2024-03-30T21:00:00.000Z", end: "2024-03-31T01:00:00.000Z" });
    expect(occ(rec, "2024-03-31T01:00:00Z")).toBeNull();
    expect(occ(rec, "2024-03-31T20:00:00Z")).toEqual({ start: "2024-03-31T20:00:00.000Z", end: "2024-04-01T00:00:00.000Z" });
  });

  it("selects weekly occurrences by the local weekday", () => {
    const mondays: Recurrence = { kind: "weekly", weekdays: [1], start: "09:00", duration_mins: 60, time_zone: "Europe/Berlin" };
    expect(occ(mondays, "2024-03-18T08:30:00Z")).toEqual({ start: "2024-03-18T08:00:00.000Z", end: "2024-03-18T09:00:00.000Z" });
    // Berlin moves to summer time on Sunday 31 March 2024.
    expect(occ(mondays, "2024-03-25T07:30:00Z")).toBeNull();
    expect(occ(mondays, "2024-04-01T07:30:00Z")).toEqual({ start: "2024-04-01T07:00:00.000Z", end: "2024-04-01T08:00:00.000Z" });
    expect(occ(mondays, "2024-04-01T08:30:00Z")).toBeNull();
    expect(occ(mondays, "2024-04-02T07:30:00Z")).toBeNull();
    // Monday 06:00 in Auckland is Sunday 17:00 UTC.
    const nz: Recurrence = { kind: "weekly", weekdays: [1], start: "06:00", duration_mins: 30, time_zone: "Pacific/Auckland" };
    expect(occ(nz, "2024-01-14T17:10:00Z")).toEqual({ start: "2024-01-14T17:00:00.000Z", end: "2024-01-14T17:30:00.000Z" });
    expect(occ(nz, "2024-01-15T17:10:00Z")).toBeNull();
  });

  it("covers a weekly window lasting several days", () => {
    const weekend: Recurrence = { kind: "weekly", weekdays: [5], start: "20:00", duration_mins: 60 * 60, time_zone: "UTC" };
    // Friday 2024-01-12 20:00 + 60 h = Monday 08:00.
    expect(occ(weekend, "2024-01-15T07:59:00Z")).toEqual({ start: "2024-01-12T20:00:00.000Z", end: "2024-01-15T08:00:00.000Z" });
    expect(occ(weekend, "2024-01-15T08:00:00Z")).toBeNull();
    expect(occ(weekend, "2024-01-12T19:59:00Z")).toBeNull();
  });
});

describe("lib/maintenanceTime: calendar", () => {
  const node = randomUUID();
  const folderTop = randomUUID();
  const folderLeaf = randomUUID();
  const windows: MaintenanceWindowTiming[] = [
    { id: "one-off", target_kind: "node", target_ids: [node], starts_at: at("2024-05-01T10:00:00Z"), ends_at: at("2024-05-01T12:00:00Z"), recurrence: null },
    {
      id: "nightly",
      target_kind: "folder",
      target_ids: [folderTop],
      starts_at: null,
      ends_at: null,
      recurrence: { kind: "daily", start: "01:00", duration_mins: 60, time_zone: "UTC" },
    },
  ];
  const cal = new MaintenanceCalendar(windows);

  it("treats a one-off window as [starts_at, ends_at)", () => {
    expect(occurrenceAt(windows[0], at("2024-05-01T10:00:00Z"))).not.toBeNull();
    expect(occurrenceAt(windows[0], at("2024-05-01T11:59:59.999Z"))).not.toBeNull();
    expect(occurrenceAt(windows[0], at("2024-05-01T12:00:00Z"))).toBeNull();
    expect(occurrenceAt(windows[0], at("2024-05-01T09:59:59Z"))).toBeNull();
  });

  it("lists the windows active at an instant", () => {
    expect(cal.activeAt(at("2024-05-01T11:00:00Z")).map((a) => a.window.id)).toEqual(["one-off"]);
    expect(cal.activeAt(at("2024-05-01T01:30:00Z")).map((a) => a.window.id)).toEqual(["nightly"]);
    expect(cal.activeAt(at("2024-05-01T02:30:00Z"))).toEqual([]);
  });

  it("puts a node in maintenance by its id or by a folder on its path", () => {
    expect(cal.isInMaintenance(node, [], at("2024-05-01T11:00:00Z"))).toBe(true);
    expect(cal.isInMaintenance(randomUUID(), [], at("2024-05-01T11:00:00Z"))).toBe(false);
    expect(cal.isInMaintenance(randomUUID(), [folderTop, folderLeaf], at("2024-05-02T01:00:00Z"))).toBe(true);
    expect(cal.isInMaintenance(randomUUID(), [folderLeaf], at("2024-05-02T01:00:00Z"))).toBe(false);
    expect(cal.isInMaintenance(randomUUID(), [folderTop], at("2024-05-02T02:00:00Z"))).toBe(false);
  });

  it("reads rows as node-postgres returns them", () => {
    const fromRows = MaintenanceCalendar.fromRows([
      { id: "r", target_kind: "node", target_ids: [node], starts_at: "2024-05-01T10:00:00Z", ends_at: new Date("2024-05-01T12:00:00Z"), recurrence: null },
    ]);
    expect(fromRows.isInMaintenance(node, [], at("2024-05-01T10:30:00Z"))).toBe(true);
  });
});

describe("maintenance-window routes", () => {
  let k: TestKernel;
  let db: string;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  const create = (body: Record<string, unknown>, token = tokens.operator) =>
    k.http
      .post("/api/v1/maintenance-windows")
      .set(bearer(token))
      .send(body as object);
  const future = (ms: number) => new Date(Date.now() + ms).toISOString();
  const oneOff = (extra: Record<string, unknown> = {}) => ({
    name: "core upgrade",
    target_kind: "node",
    target_ids: [ids.a1],
    starts_at: future(-3_600_000),
    ends_at: future(3_600_000),
    ...extra,
  });
  const weekly = (extra: Record<string, unknown> = {}) => ({
    name: "Monday patching",
    target_kind: "folder",
    target_ids: [ids.siteA],
    recurrence: { kind: "weekly", weekdays: [1], start: "09:00", duration_mins: 60, time_zone: "Europe/Berlin", ...extra },
  });

  beforeAll(async () => {
    k = await startAlertsKernel();
    db = k.databaseUrl!;
    ids.siteA = await insertFolder(db, "site-a");
    ids.rackA = await insertFolder(db, "rack-a", ids.siteA);
    ids.siteB = await insertFolder(db, "site-b");
    ids.emptyB = await insertFolder(db, "empty-b", ids.siteB);
    ids.a1 = await insertNode(db, "a1", ids.rackA);
    ids.b1 = await insertNode(db, "b1", ids.siteB);
    tokens.operator = await k.token("operator", "All", "ops");
    tokens.operatorA = await k.token("operator", { folders: [ids.siteA] }, "ops-a");
    tokens.viewer = await k.token("viewer");
    tokens.viewerA = await k.token("viewer", { folders: [ids.siteA] });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("creates a one-off window for nodes and reads it back", async () => {
    const body = oneOff({ starts_at: "2030-01-01T00:00:00.000001Z", ends_at: "2030-01-01T02:00:00Z", target_ids: [ids.a1, ids.b1, ids.a1] });
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String) });
    const got = await k.http.get(`/api/v1/maintenance-windows/${res.body.id}`).set(bearer(tokens.viewer));
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: res.body.id,
      name: "core upgrade",
      target_kind: "node",
      target_ids: [ids.a1, ids.b1],
      starts_at: "2030-01-01T00:00:00.000001Z",
      ends_at: "2030-01-01T02:00:00.000000Z",
      recurrence: null,
      created_by: "ops",
      created_at: expect.stringMatching(/\.\d{6}Z$/),
    });
  });

  it("creates a recurring window for folders, normalising weekdays and the time zone name", async () => {
    const res = await create(weekly({ weekdays: [5, 1], time_zone: "europe/berlin" }));
    expect(res.status).toBe(201);
    const got = await k.http.get(`/api/v1/maintenance-windows/${res.body.id}`).set(bearer(tokens.viewer));
    expect(got.body).toMatchObject({
      target_kind: "folder",
      target_ids: [ids.siteA],
      starts_at: null,
      ends_at: null,
      recurrence: { kind: "weekly", weekdays: [1, 5], start: "09:00", duration_mins: 60, time_zone: "Europe/Berlin" },
    });
  });

  it("lists the windows active at an instant, across a DST change, with the covering occurrence", async () => {
    const { body } = await create({
      name: "nightly NY",
      target_kind: "node",
      target_ids: [ids.a1],
      recurrence: { kind: "daily", start: "02:30", duration_mins: 30, time_zone: "America/New_York" },
    });
    const activeAt = async (instant: string, token = tokens.viewer) =>
      (await k.http.get("/api/v1/maintenance-windows/active").query({ at: instant }).set(bearer(token))).body as {
        id: string;
        name: string;
        active_from: string;
        active_until: string;
      }[];
    // On 10 March 2024 02:30 does not exist in New York: the occurrence starts at 03:30 EDT (07:30Z).
    expect((await activeAt("2024-03-10T07:10:00Z")).map((w) => w.id)).not.toContain(body.id);
    expect(await activeAt("2024-03-10T07:40:00Z")).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: body.id, active_from: "2024-03-10T07:30:00.000Z", active_until: "2024-03-10T08:00:00.000Z" })]),
    );
    // The day before, 02:30 EST = 07:30Z; the day after, 02:30 EDT = 06:30Z.
    expect((await activeAt("2024-03-09T07:40:00Z")).map((w) => w.id)).toContain(body.id);
    expect((await activeAt("2024-03-11T06:40:00Z")).map((w) => w.id)).toContain(body.id);
    expect((await activeAt("2024-03-11T07:40:00Z")).map((w) => w.id)).not.toContain(body.id);
    // Monday patching in Berlin (weekly, created above): 09:00 CET = 08:00Z before the change, 09:00 CEST = 07:00Z after.
    expect((await activeAt("2024-03-18T08:30:00Z")).map((w) => w.name)).toContain("Monday patching");
    expect((await activeAt("2024-04-01T07:30:00Z")).map((w) => w.name)).toContain("Monday patching");
    expect((await activeAt("2024-04-01T08:30:00Z")).map((w) => w.name)).not.toContain("Monday patching");
    expect((await activeAt("2024-04-02T07:30:00Z")).map((w) => w.name)).not.toContain("Monday patching");
  });

  it("lists windows active now by default (one-off included)", async () => {
    const { body } = await create(oneOff({ name: "now" }));
    const res = await k.http.get("/api/v1/maintenance-windows/active").set(bearer(tokens.viewer));
    expect(res.status).toBe(200);
    expect(res.body.map((w: { id: string }) => w.id)).toContain(body.id);
    expectError(await k.http.get("/api/v1/maintenance-windows/active").query({ at: "noon" }).set(bearer(tokens.viewer)), 400, "validation_failed");
  });

  it.each<[string, () => Record<string, unknown>]>([
    ["both forms", () => ({ ...oneOff(), recurrence: weekly().recurrence })],
    ["neither form", () => ({ name: "x", target_kind: "node", target_ids: [ids.a1] })],
    ["starts_at without ends_at", () => ({ name: "x", target_kind: "node", target_ids: [ids.a1], starts_at: future(0) })],
    ["ends_at before starts_at", () => oneOff({ starts_at: future(7_200_000), ends_at: future(3_600_000) })],
    ["ends_at equal to starts_at", () => oneOff({ starts_at: "2030-01-01T00:00:00Z", ends_at: "2030-01-01T00:00:00Z" })],
    ["a window already over", () => oneOff({ starts_at: future(-7_200_000), ends_at: future(-3_600_000) })],
    ["an unparseable starts_at", () => oneOff({ starts_at: "today" })],
    ["an unknown time zone", () => weekly({ time_zone: "Mars/Olympus_Mons" })],
    ["weekly without weekdays", () => weekly({ weekdays: undefined })],
    ["weekly with empty weekdays", () => weekly({ weekdays: [] })],
    ["daily with weekdays", () => weekly({ kind: "daily" })],
    ["a weekday 7", () => weekly({ weekdays: [7] })],
    ["a repeated weekday", () => weekly({ weekdays: [1, 1] })],
    ["a daily duration over a day", () => weekly({ kind: "daily", weekdays: undefined, duration_mins: 1441 })],
    ["a duration of 0", () => weekly({ duration_mins: 0 })],
    ["a duration over a week", () => weekly({ duration_mins: 10081 })],
    ["start 24:00", () => weekly({ start: "24:00" })],
    ["start 9:00", () => weekly({ start: "9:00" })],
    ["an unknown kind", () => weekly({ kind: "monthly" })],
    ["an unknown recurrence field", () => weekly({ every: 2 })],
    ["an unknown target kind", () => oneOff({ target_kind: "pool" })],
    ["no targets", () => oneOff({ target_ids: [] })],
    ["a target that is not a uuid", () => oneOff({ target_ids: ["a1"] })],
    ["no name", () => oneOff({ name: undefined })],
    ["a blank name", () => oneOff({ name: "   " })],
  ])("400 validation_failed for %s", async (_name, body) => {
    expectError(await create(body()), 400, "validation_failed");
  });

  it("answers 400 unknown_reference for targets that do not exist or lie outside the caller's scope", async () => {
    expectError(await create(oneOff({ target_ids: [ids.a1, randomUUID()] })), 400, "unknown_reference");
    expectError(await create(oneOff({ target_ids: [ids.b1] }), tokens.operatorA), 400, "unknown_reference");
    expectError(await create({ ...weekly(), target_ids: [ids.siteB] }, tokens.operatorA), 400, "unknown_reference");
    expectError(await create({ ...weekly(), target_ids: [randomUUID()] }), 400, "unknown_reference");
    // A folder is known through the nodes beneath it: an empty folder cannot be named (except as one of the caller's own folders).
    expectError(await create({ ...weekly(), target_ids: [ids.emptyB] }), 400, "unknown_reference");
    expect((await create({ ...weekly(), target_ids: [ids.rackA] }, tokens.operatorA)).status).toBe(201);
    expect((await create({ ...weekly(), target_ids: [ids.siteA] }, tokens.operatorA)).status).toBe(201);
  });

  it("shows a folder-scoped caller only windows whose every target it can see", async () => {
    const mixed = (await create(oneOff({ name: "mixed", target_ids: [ids.a1, ids.b1] }))).body.id;
    const onlyB = (await create({ ...weekly(), name: "b only", target_ids: [ids.siteB] })).body.id;
    const mine = (await create(oneOff({ name: "mine" }), tokens.operatorA)).body.id;
    const listed = async (token: string) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const res = await k.http
          .get("/api/v1/maintenance-windows")
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .set(bearer(token));
        expect(res.status).toBe(200);
        seen.push(...res.body.map((w: { id: string }) => w.id));
        cursor = res.headers["x-next-cursor"];
      } while (cursor);
      return seen;
    };
    const all = await listed(tokens.viewer);
    const stored = await rawQuery<{ id: string }>(db, "SELECT id FROM alerts.maintenance_windows ORDER BY created_at DESC, id DESC");
    expect(all).toEqual(stored.map((r) => r.id));
    const scoped = await listed(tokens.viewerA);
    expect(scoped).toContain(mine);
    expect(scoped).not.toContain(mixed);
    expect(scoped).not.toContain(onlyB);
    expectError(await k.http.get(`/api/v1/maintenance-windows/${mixed}`).set(bearer(tokens.viewerA)), 404, "not_found");
    expectError(await k.http.delete(`/api/v1/maintenance-windows/${onlyB}`).set(bearer(tokens.operatorA)), 404, "not_found");
    const activeScoped = (await k.http.get("/api/v1/maintenance-windows/active").set(bearer(tokens.viewerA))).body.map((w: { id: string }) => w.id);
    expect(activeScoped).toContain(mine);
    expect(activeScoped).not.toContain(mixed);
  });

  it("deletes a window (ManageMaintenance): 204, then 404", async () => {
    const id = (await create(oneOff({ name: "to delete" }))).body.id;
    expectError(await k.http.delete(`/api/v1/maintenance-windows/${id}`).set(bearer(tokens.viewer)), 403, "permission_denied");
    expect((await k.http.delete(`/api/v1/maintenance-windows/${id}`).set(bearer(tokens.operator))).status).toBe(204);
    expectError(await k.http.delete(`/api/v1/maintenance-windows/${id}`).set(bearer(tokens.operator)), 404, "not_found");
    expectError(await k.http.get(`/api/v1/maintenance-windows/${id}`).set(bearer(tokens.operator)), 404, "not_found");
    expectError(await k.http.get("/api/v1/maintenance-windows/not-a-uuid").set(bearer(tokens.operator)), 400, "validation_failed");
  });

  it("needs ManageMaintenance to write and read to list: 401 and 403", async () => {
    expectError(await k.http.post("/api/v1/maintenance-windows").send(oneOff()), 401, "unauthorized");
    expectError(await create(oneOff(), tokens.viewer), 403, "permission_denied");
    expectError(await k.http.get("/api/v1/maintenance-windows"), 401, "unauthorized");
    expectError(await k.http.get("/api/v1/maintenance-windows").query({ cursor: "bogus" }).set(bearer(tokens.viewer)), 400, "invalid_cursor");
    const doc = (await k.http.get("/api/v1/openapi.json")).body;
    expect(doc.paths["/api/v1/maintenance-windows"].post.responses["403"].description).toBe("Role lacks ManageMaintenance");
  });
});
