import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { bearer, insertFolder, insertHistory, insertNode, startAlertsKernel, type HistoryFixture } from "./readSupport.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
let rows: Required<HistoryFixture>[] = [];

const get = (path: string, query: Record<string, string | number> = {}, token = k.adminToken) =>
  k.http.get(`/api/v1/alerts/${path}`).query(query).set(bearer(token));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Expected calendar cells of these rows: fires only, UTC weekday (0 = Sunday) and hour, non-empty cells ordered. */
function cells(of: Required<HistoryFixture>[]): { weekday: number; hour: number; count: number }[] {
  const counts = new Map<string, number>();
  for (const r of of) {
    if (r.resolved) continue;
    const d = new Date(r.recorded_at);
    const key = `${d.getUTCDay()}|${d.getUTCHours()}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()]
    .map(([key, count]) => {
      const [weekday, hour] = key.split("|").map(Number);
      return { weekday, hour, count };
    })
    .sort((a, b) => a.weekday - b.weekday || a.hour - b.hour);
}

beforeAll(async () => {
  k = await startAlertsKernel();
  db = k.databaseUrl!;
  ids.siteA = await insertFolder(db, "site-a");
  ids.siteB = await insertFolder(db, "site-b");
  ids.nA1 = await insertNode(db, "alpha", ids.siteA);
  ids.nA2 = await insertNode(db, "bravo", ids.siteA);
  ids.nB = await insertNode(db, "charlie", ids.siteB);
  tokens.viewer = await k.token("viewer");
  tokens.viewerA = await k.token("viewer", { folders: [ids.siteA] });
});
afterAll(async () => {
  await k?.stop();
});

describe("with no history", () => {
  it("answers empty lists and an empty ranking", async () => {
    expect((await get("calendar", {}, tokens.viewer)).body).toEqual([]);
    expect((await get("transitions", {}, tokens.viewer)).body).toEqual([]);
    expect((await get("top-nodes", {}, tokens.viewer)).body).toEqual({ entries: [], partial: false });
    expect((await get("top-nodes", {}, tokens.viewerA)).body).toEqual({ entries: [], partial: true });
  });
});

describe("with history", () => {
  beforeAll(async () => {
    const now = Date.now();
    const ago = (ms: number) => new Date(now - ms).toISOString();
    const f: HistoryFixture[] = [];
    // alpha: 5 fires over the last 3 days; bravo: 3 fires; charlie: 4 fires; a deleted node: 6 fires; a pool: 2 fires.
    for (let i = 0; i < 5; i++) f.push({ node_id: ids.nA1, recorded_at: ago(i * 13 * HOUR + 60_000) });
    for (let i = 0; i < 3; i++) f.push({ node_id: ids.nA2, recorded_at: ago(i * 7 * HOUR + 120_000), severity: "warning", state: "warning" });
    for (let i = 0; i < 4; i++) f.push({ node_id: ids.nB, recorded_at: ago(i * 5 * HOUR + 180_000) });
    for (let i = 0; i < 6; i++) f.push({ node_id: randomUUID(), recorded_at: ago(i * HOUR + 240_000) });
    for (let i = 0; i < 2; i++) f.push({ subject_kind: "pool", subject_name: "edge", metric: null, recorded_at: ago(i * 3 * HOUR + 300_000) });
    // Clears never count as fires.
    for (let i = 0; i < 4; i++) f.push({ node_id: ids.nA2, recorded_at: ago(i * 2 * HOUR + 30_000), resolved: true, state: "ok" });
    // Old fires: outside the default 28 days (and outside a one-day top-nodes window), inside 60 days.
    f.push({ node_id: ids.nA2, recorded_at: ago(40 * DAY) }, { node_id: ids.nA2, recorded_at: ago(45 * DAY) });
    rows = await insertHistory(db, f);
  });

  const recent = (days: number) => rows.filter((r) => Date.parse(r.recorded_at) >= Date.now() - days * DAY);

  describe("GET /alerts/calendar", () => {
    it("counts fires per UTC weekday and hour over the default 28 days", async () => {
      const res = await get("calendar", {}, tokens.viewer);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(cells(recent(28)));
      expect(res.body.reduce((n: number, c: { count: number }) => n + c.count, 0)).toBe(20);
      for (const c of res.body) {
        expect(c.weekday).toBeGreaterThanOrEqual(0);
        expect(c.weekday).toBeLessThanOrEqual(6);
        expect(c.hour).toBeGreaterThanOrEqual(0);
        expect(c.hour).toBeLessThanOrEqual(23);
      }
    });

    it("takes days", async () => {
      expect((await get("calendar", { days: 60 })).body).toEqual(cells(recent(60)));
      expect((await get("calendar", { days: 1 })).body).toEqual(cells(recent(1)));
    });

    it("counts only the nodes a folder-scoped caller can see", async () => {
      const mine = recent(28).filter((r) => r.node_id === ids.nA1 || r.node_id === ids.nA2);
      expect((await get("calendar", {}, tokens.viewerA)).body).toEqual(cells(mine));
    });

    it.each([0, 367, "x", 1.5])("400 for days=%s", async (days) => {
      expectError(await get("calendar", { days }), 400, "validation_failed");
    });
  });

  describe("GET /alerts/top-nodes", () => {
    it("ranks existing nodes by fires within the window, with current names; partial false for scope All", async () => {
      const res = await get("top-nodes", {}, tokens.viewer);
      expect(res.status).toBe(200);
      const inDay = (id: string) => rows.filter((r) => r.node_id === id && !r.resolved && Date.parse(r.recorded_at) >= Date.now() - DAY).length;
      const want = [
        { node_id: ids.nA1, node_name: "alpha", count: inDay(ids.nA1) },
        { node_id: ids.nA2, node_name: "bravo", count: inDay(ids.nA2) },
        { node_id: ids.nB, node_name: "charlie", count: inDay(ids.nB) },
      ].sort((a, b) => b.count - a.count || (a.node_id < b.node_id ? -1 : 1));
      expect(res.body).toEqual({ entries: want, partial: false });
    });

    it("takes window (seconds) and limit", async () => {
      const res = await get("top-nodes", { window: 30 * 86400, limit: 2 });
      // alpha 5, charlie 4, bravo 3 within 30 days (the deleted node's fires are left out).
      expect(res.body).toEqual({
        entries: [
          { node_id: ids.nA1, node_name: "alpha", count: 5 },
          { node_id: ids.nB, node_name: "charlie", count: 4 },
        ],
        partial: false,
      });
      // Within 60 days bravo has 5 fires too: ties are ranked by node id.
      const tie = [
        { node_id: ids.nA1, node_name: "alpha", count: 5 },
        { node_id: ids.nA2, node_name: "bravo", count: 5 },
      ].sort((a, b) => (a.node_id < b.node_id ? -1 : 1));
      expect((await get("top-nodes", { window: 60 * 86400, limit: 2 })).body.entries).toEqual(tie);
    });

    it("ranks only visible nodes for a folder-scoped caller and says partial", async () => {
      const res = await get("top-nodes", { window: 30 * 86400 }, tokens.viewerA);
      expect(res.body).toEqual({
        entries: [
          { node_id: ids.nA1, node_name: "alpha", count: 5 },
          { node_id: ids.nA2, node_name: "bravo", count: 3 },
        ],
        partial: true,
      });
    });

    it.each<[Record<string, number | string>]>([[{ window: 59 }], [{ window: 31622401 }], [{ limit: 0 }], [{ limit: 101 }], [{ window: "day" }]])(
      "400 for %j",
      async (query) => {
        expectError(await get("top-nodes", query), 400, "validation_failed");
      },
    );
  });

  describe("GET /alerts/transitions", () => {
    const newest = () =>
      [...rows].sort((a, b) => (a.recorded_at === b.recorded_at ? (a.id < b.id ? 1 : -1) : Date.parse(a.recorded_at) < Date.parse(b.recorded_at) ? 1 : -1));

    it("answers the latest 12 fires and resolutions, newest first, with node names joined", async () => {
      const res = await get("transitions", {}, tokens.viewer);
      expect(res.status).toBe(200);
      expect(res.body.map((r: { id: string }) => r.id)).toEqual(
        newest()
          .slice(0, 12)
          .map((r) => r.id),
      );
      const names: Record<string, string> = { [ids.nA1]: "alpha", [ids.nA2]: "bravo", [ids.nB]: "charlie" };
      for (const t of res.body) expect(t.node_name).toBe(t.node === null ? null : (names[t.node] ?? null));
      expect(res.body.some((t: { resolved: boolean }) => t.resolved)).toBe(true);
      const first = res.body[0];
      expect(Object.keys(first).sort()).toEqual(
        [
          "id",
          "recorded_at",
          "at_unix_ms",
          "check",
          "direction",
          "ifindex",
          "if_name",
          "metric",
          "node",
          "observed_value",
          "threshold_value",
          "resolved",
          "row",
          "row_name",
          "severity",
          "state",
          "subject_kind",
          "subject_name",
          "acked",
          "title",
          "node_name",
          "symptom_of",
        ].sort(),
      );
    });

    it("takes limit, and shows a folder-scoped caller only its nodes", async () => {
      expect((await get("transitions", { limit: 3 })).body.map((r: { id: string }) => r.id)).toEqual(
        newest()
          .slice(0, 3)
          .map((r) => r.id),
      );
      const mine = newest().filter((r) => r.node_id === ids.nA1 || r.node_id === ids.nA2);
      expect((await get("transitions", { limit: 100 }, tokens.viewerA)).body.map((r: { id: string }) => r.id)).toEqual(mine.map((r) => r.id));
    });

    it.each([0, 101, "all"])("400 for limit=%s", async (limit) => {
      expectError(await get("transitions", { limit }), 400, "validation_failed");
    });
  });

  it("answers 401 without a token", async () => {
    for (const path of ["calendar", "top-nodes", "transitions"]) expectError(await k.http.get(`/api/v1/alerts/${path}`), 401, "unauthorized");
  });
});
