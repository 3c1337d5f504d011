import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { bearer, insertFolder, insertHistory, insertNode, startAlertsKernel, type HistoryFixture } from "./readSupport.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
type Row = Required<HistoryFixture>;
let fixture: Row[] = [];
/** incident_key|severity pairs that carry an ack. */
const acked = new Set<string>();

const at = (micros: number) => `2026-01-10T12:00:00.${String(micros).padStart(6, "0")}Z`;
const history = (query: Record<string, string | number | boolean> = {}, token = k.adminToken) =>
  k.http.get("/api/v1/alerts/history").query(query).set(bearer(token));

/** Newest first by (recorded_at, id), as the service orders; timestamps here share one text format, uuids compare as lowercase hex. */
const newestFirst = (a: Row, b: Row) => (a.recorded_at === b.recorded_at ? (a.id < b.id ? 1 : -1) : a.recorded_at < b.recorded_at ? 1 : -1);
const idsOf = (rows: { id: string }[]) => rows.map((r) => r.id);
const expected = (pred: (r: Row) => boolean) => idsOf(fixture.filter(pred).sort(newestFirst));

beforeAll(async () => {
  k = await startAlertsKernel();
  db = k.databaseUrl!;
  ids.siteA = await insertFolder(db, "site-a");
  ids.rackA = await insertFolder(db, "rack-a", ids.siteA);
  ids.siteB = await insertFolder(db, "site-b");
  ids.emptyA = await insertFolder(db, "empty-a", ids.siteA);
  ids.nA1 = await insertNode(db, "core-sw-01", ids.rackA);
  ids.nA2 = await insertNode(db, "edge-rtr-02", ids.siteA);
  ids.nB = await insertNode(db, "branch-fw", ids.siteB);
  ids.nRoot = await insertNode(db, "root-box", null);
  ids.gone = randomUUID();
  tokens.viewer = await k.token("viewer");
  tokens.viewerA = await k.token("viewer", { folders: [ids.siteA] });
  tokens.viewerB = await k.token("viewer", { folders: [ids.siteB] });
  const c1 = randomUUID();
  const c3 = randomUUID();
  fixture = await insertHistory(db, [
    { recorded_at: at(1), node_id: ids.nA1, check_id: c1, metric: "cpu_util", severity: "critical", state: "critical" },
    { recorded_at: at(2), node_id: ids.nA1, check_id: c1, metric: "cpu_util", severity: "critical", state: "ok", resolved: true },
    { recorded_at: at(3), node_id: ids.nA2, check_id: c3, metric: "if_in_util", ifindex: 0, if_name: "ge-0/0/0", severity: "warning", state: "warning" },
    { recorded_at: at(4), node_id: ids.nB, metric: "mem_used", row_key: 1, row_name: "Processor", severity: "warning", state: "warning" },
    { recorded_at: at(5), node_id: ids.nRoot, metric: null, direction: null, observed_value: null, threshold_value: null, state: "unreachable" },
    {
      recorded_at: at(6),
      subject_kind: "pool",
      subject_name: "edge-pool",
      metric: null,
      direction: null,
      state: "unreachable",
      title: "Pool edge-pool offline",
    },
    { recorded_at: at(7), node_id: ids.nB, metric: "cpu_util", severity: "info", state: "ok" },
    { recorded_at: at(8), node_id: ids.nA1, metric: "CPU_Load", severity: "warning", state: "maintenance" },
    { recorded_at: at(9), node_id: ids.gone, metric: "cpu_util" },
    // Written in one flush with the row above: same recorded_at.
    {
      recorded_at: at(9),
      node_id: ids.nA2,
      check_id: c3,
      metric: "if_in_util",
      ifindex: 0,
      if_name: "ge-0/0/0",
      severity: "warning",
      state: "ok",
      resolved: true,
    },
  ]);
  await rawQuery(db, "INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, acked_at, note) VALUES ($1, 'critical', $2, 'alice', $3, 'on it')", [
    fixture[0].incident_key,
    ids.nA1,
    "2026-01-10T12:05:00.123456Z",
  ]);
  acked.add(`${fixture[0].incident_key}|critical`);
  // An ack of the same incident at another severity does not make the critical rows acked twice, nor the warning rows of other incidents.
  await rawQuery(db, "INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by) VALUES ($1, 'warning', $2, 'bob')", [
    fixture[0].incident_key,
    ids.nA1,
  ]);
});
afterAll(async () => {
  await k?.stop();
});

const isAcked = (r: Row) => acked.has(`${r.incident_key}|${r.severity}`);
const inSiteA = (r: Row) => r.node_id === ids.nA1 || r.node_id === ids.nA2;

describe("GET /alerts/history rows", () => {
  it("answers every row newest first by (recorded_at, id), each exactly the spec's Alert history row", async () => {
    const res = await history();
    expect(res.status).toBe(200);
    expect(idsOf(res.body)).toEqual(expected(() => true));
    const first = res.body.find((r: { id: string }) => r.id === fixture[0].id);
    expect(first).toEqual({
      id: fixture[0].id,
      recorded_at: at(1),
      at_unix_ms: Date.parse(at(1)),
      check: fixture[0].check_id,
      direction: "above",
      ifindex: null,
      if_name: null,
      metric: "cpu_util",
      node: ids.nA1,
      observed_value: 95,
      threshold_value: 90,
      resolved: false,
      row: null,
      row_name: null,
      severity: "critical",
      state: "critical",
      subject_kind: "node",
      subject_name: null,
      acked: { by: "alice", at: "2026-01-10T12:05:00.123456Z", note: "on it" },
      title: "CPU utilisation above 90",
      symptom_of: null,
    });
    const port = res.body.find((r: { id: string }) => r.id === fixture[2].id);
    expect(port).toMatchObject({ ifindex: 0, if_name: "ge-0/0/0", acked: null });
    const pool = res.body.find((r: { id: string }) => r.id === fixture[5].id);
    expect(pool).toMatchObject({ node: null, subject_kind: "pool", subject_name: "edge-pool", metric: null, direction: null });
    const table = res.body.find((r: { id: string }) => r.id === fixture[3].id);
    expect(table).toMatchObject({ row: 1, row_name: "Processor" });
  });

  it("shares an incident's ack state among all its transitions at that severity", async () => {
    const res = await history({ node_id: ids.nA1 });
    const byId = new Map(res.body.map((r: { id: string; acked: unknown }) => [r.id, r.acked]));
    expect(byId.get(fixture[0].id)).toEqual(expect.objectContaining({ by: "alice" }));
    expect(byId.get(fixture[1].id)).toEqual(expect.objectContaining({ by: "alice" }));
    expect(byId.get(fixture[7].id)).toBeNull();
  });

  it("answers [] for a before older than every row", async () => {
    const res = await history({ before: "2000-01-01T00:00:00Z" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});

describe("history filters", () => {
  type Query = Record<string, string | number | boolean>;
  it.each<[string, Query | (() => Query), (r: Row) => boolean]>([
    ["limit", { limit: 3 }, () => true],
    ["severity list", { severity: "warning,critical" }, (r) => r.severity !== "info"],
    ["severity one", { severity: "info" }, (r) => r.severity === "info"],
    ["severity empty = all", { severity: "" }, () => true],
    ["severity with spaces and repeats", { severity: " warning , warning" }, (r) => r.severity === "warning"],
    ["state one", { state: "unreachable" }, (r) => r.state === "unreachable"],
    ["state list", { state: "ok,maintenance" }, (r) => r.state === "ok" || r.state === "maintenance"],
    ["resolved=true", { resolved: "true" }, (r) => r.resolved],
    ["resolved=false", { resolved: "false" }, (r) => !r.resolved],
    ["acked=true", { acked: "true" }, isAcked],
    ["acked=false", { acked: "false" }, (r) => !isAcked(r)],
    ["metric substring, any case", { metric: "CPU" }, (r) => r.metric !== null && r.metric.toLowerCase().includes("cpu")],
    ["metric substring in the middle", { metric: "_in_" }, (r) => r.metric === "if_in_util"],
    ["metric: liveness rows never match", { metric: "u" }, (r) => r.metric !== null && r.metric.toLowerCase().includes("u")],
    ["node_id", () => ({ node_id: ids.nA1 }), (r) => r.node_id === ids.nA1],
    ["node_id of a deleted node (scope All: history outlives it)", () => ({ node_id: ids.gone }), (r) => r.node_id === ids.gone],
    ["node_q, any case", { node_q: "SW-0" }, (r) => r.node_id === ids.nA1],
    ["node_q matching several", { node_q: "-0" }, inSiteA],
    ["group_id: the folder and everything beneath", () => ({ group_id: ids.siteA }), inSiteA],
    ["group_id: a sub-folder", () => ({ group_id: ids.rackA }), (r) => r.node_id === ids.nA1],
    ["group_id of a folder without nodes", () => ({ group_id: ids.emptyA }), () => false],
    ["since (inclusive)", { since: at(7) }, (r) => r.recorded_at >= at(7)],
    ["until (inclusive)", { until: at(3) }, (r) => r.recorded_at <= at(3)],
    ["since and until", { since: at(3), until: at(5) }, (r) => r.recorded_at >= at(3) && r.recorded_at <= at(5)],
    ["since with an offset", { since: "2026-01-10T13:00:00.000007+01:00" }, (r) => r.recorded_at >= at(7)],
    ["before alone: strictly before that instant", { before: at(9) }, (r) => r.recorded_at < at(9)],
    ["combined", () => ({ severity: "warning", resolved: false, group_id: ids.siteA, metric: "util" }), (r) => r.id === fixture[2].id],
  ])("%s", async (_name, q, pred) => {
    // Ids exist only once beforeAll ran: those queries are functions.
    const query = typeof q === "function" ? q() : q;
    const res = await history(query);
    expect(res.status).toBe(200);
    const want = expected(pred);
    expect(idsOf(res.body)).toEqual(query.limit ? want.slice(0, Number(query.limit)) : want);
  });

  it("before with before_id continues inside rows sharing recorded_at", async () => {
    const shared = expected((r) => r.recorded_at === at(9));
    expect(shared).toHaveLength(2);
    const res = await history({ before: at(9), before_id: shared[0] });
    expect(idsOf(res.body)).toEqual(expected((r) => r.recorded_at < at(9) || (r.recorded_at === at(9) && r.id < shared[0])));
    expect(res.body[0].id).toBe(shared[1]);
  });

  it("node_q follows the node's current name", async () => {
    await rawQuery(db, "UPDATE inventory.nodes SET name = 'renamed-branch' WHERE id = $1", [ids.nB]);
    try {
      expect(idsOf((await history({ node_q: "renamed" })).body)).toEqual(expected((r) => r.node_id === ids.nB));
      expect((await history({ node_q: "branch-fw" })).body).toEqual([]);
    } finally {
      await rawQuery(db, "UPDATE inventory.nodes SET name = 'branch-fw' WHERE id = $1", [ids.nB]);
    }
  });
});

describe("history: 400s", () => {
  it.each<[string, Record<string, string | number>]>([
    ["limit 0", { limit: 0 }],
    ["limit 1001", { limit: 1001 }],
    ["limit not a number", { limit: "ten" }],
    ["before not a timestamp", { before: "yesterday" }],
    ["before without zone", { before: "2026-01-10T12:00:00" }],
    ["before on 30 February", { before: "2026-02-30T00:00:00Z" }],
    ["before_id not a uuid", { before: at(5), before_id: "abc" }],
    ["before_id without before", { before_id: randomUUID() }],
    ["since unparseable", { since: "2026-13-01T00:00:00Z" }],
    ["until unparseable", { until: "1700000000" }],
    ["since after until", { since: at(5), until: at(4) }],
    ["unknown severity", { severity: "major" }],
    ["one unknown severity among known", { severity: "warning,Critical" }],
    ["unknown state", { state: "down" }],
    ["state list with an unknown token", { state: "ok,up" }],
    ["resolved not a boolean", { resolved: "maybe" }],
    ["acked not a boolean", { acked: "2" }],
    ["node_id not a uuid", { node_id: "core-sw-01" }],
    ["group_id not a uuid", { group_id: "site-a" }],
  ])("%s", async (_name, query) => {
    expectError(await history(query), 400, "validation_failed");
  });
});

describe("history: folder scope", () => {
  it("lists only rows of nodes filed beneath the caller's folders (no pools, no tree root, no deleted nodes)", async () => {
    const res = await history({}, tokens.viewerA);
    expect(res.status).toBe(200);
    expect(idsOf(res.body)).toEqual(expected(inSiteA));
    expect(idsOf((await history({}, tokens.viewerB)).body)).toEqual(expected((r) => r.node_id === ids.nB));
  });

  it("combines the scope with the filters", async () => {
    expect(idsOf((await history({ metric: "cpu" }, tokens.viewerA)).body)).toEqual(expected((r) => r.node_id === ids.nA1));
    expect(idsOf((await history({ node_q: "b" }, tokens.viewerA)).body)).toEqual([]);
  });

  it("answers 404 for node_id or group_id outside the scope, or a node that does not exist", async () => {
    expectError(await history({ node_id: ids.nB }, tokens.viewerA), 404, "not_found");
    expectError(await history({ node_id: ids.nRoot }, tokens.viewerA), 404, "not_found");
    expectError(await history({ node_id: ids.gone }, tokens.viewerA), 404, "not_found");
    expectError(await history({ group_id: ids.siteB }, tokens.viewerA), 404, "not_found");
    expectError(await history({ group_id: randomUUID() }, tokens.viewerA), 404, "not_found");
    expect(idsOf((await history({ node_id: ids.nA2 }, tokens.viewerA)).body)).toEqual(expected((r) => r.node_id === ids.nA2));
    expect(idsOf((await history({ group_id: ids.rackA }, tokens.viewerA)).body)).toEqual(expected((r) => r.node_id === ids.nA1));
    // One of the caller's own folders is visible even with no node beneath it.
    const own = await k.token("viewer", { folders: [ids.emptyA] });
    expect((await history({ group_id: ids.emptyA }, own)).body).toEqual([]);
  });

  it("follows the node's current filing", async () => {
    await rawQuery(db, "UPDATE inventory.nodes SET group_id = $2 WHERE id = $1", [ids.nB, ids.rackA]);
    try {
      expect(idsOf((await history({ group_id: ids.siteA })).body)).toEqual(expected((r) => inSiteA(r) || r.node_id === ids.nB));
      expect((await history({}, tokens.viewerB)).body).toEqual([]);
    } finally {
      await rawQuery(db, "UPDATE inventory.nodes SET group_id = $2 WHERE id = $1", [ids.nB, ids.siteB]);
    }
  });
});

describe("history: access", () => {
  it("answers 401 without a token and lets a viewer read", async () => {
    expectError(await k.http.get("/api/v1/alerts/history"), 401, "unauthorized");
    expect((await history({}, tokens.viewer)).status).toBe(200);
  });
});

describe("history: walking 10 000 rows that share recorded_at", () => {
  const walkIds = new Set<string>();

  beforeAll(async () => {
    const walker = await insertNode(db, "walker", ids.siteB);
    // 10 000 rows on 7 instants one microsecond apart (truncating to milliseconds would merge them all), 6 000 on one instant.
    const instants = [at(500000), at(500001), at(500002), at(500003), at(500004), at(500005), at(500006)];
    const rows: HistoryFixture[] = [];
    for (let i = 0; i < 10_000; i++) rows.push({ node_id: walker, recorded_at: i < 6000 ? instants[3] : instants[i % 7], metric: "walk_metric" });
    for (const r of await insertHistory(db, rows)) walkIds.add(r.id);
  });

  async function walk(limit: number, query: Record<string, string> = {}): Promise<string[]> {
    const seen: string[] = [];
    let cursor: Record<string, string> = {};
    for (let pages = 0; pages < 10_000; pages++) {
      const res = await history({ ...query, ...cursor, limit });
      expect(res.status).toBe(200);
      seen.push(...idsOf(res.body));
      if (res.body.length < limit) return seen;
      const last = res.body[res.body.length - 1];
      cursor = { before: last.recorded_at, before_id: last.id };
    }
    throw new Error("walk did not end");
  }

  it("sees every row exactly once, in order, through before + before_id", async () => {
    const all = Number((await rawQuery<{ n: string }>(db, "SELECT count(*) AS n FROM alerts.history"))[0].n);
    const seen = await walk(1000);
    expect(seen).toHaveLength(all);
    const distinct = new Set(seen);
    expect(distinct.size).toBe(all);
    expect([...walkIds].every((id) => distinct.has(id))).toBe(true);
    // In order: each row is older than (or, sharing recorded_at, has a lower id than) the one before it.
    const order = await rawQuery<{ id: string }>(db, "SELECT id FROM alerts.history ORDER BY recorded_at DESC, id DESC");
    expect(seen).toEqual(order.map((r) => r.id));
  });

  it("sees every row once with a small page and a filter", async () => {
    const seen = await walk(173, { metric: "walk_metric" });
    expect(seen).toHaveLength(10_000);
    expect(new Set(seen)).toEqual(walkIds);
  });

  it("carries recorded_at with microseconds", async () => {
    const res = await history({ metric: "walk", limit: 1 });
    expect(res.body[0].recorded_at).toBe(at(500006));
  });
});
