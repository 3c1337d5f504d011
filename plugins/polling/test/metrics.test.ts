import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { definePlugin, type PluginManifest } from "../../../core/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../index.js";
import { SWEEP_CHANNEL } from "../services/SweepService.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const MISSING = "00000000-0000-4000-8000-000000000000";
const DAY_MS = 86_400_000;

/**
 * The polling manifest with this part's job and channel, whether or not index.ts declares them yet. The sweep job gets
 * a short lock here: Agenda starts a timer of half the lock lifetime per run that nothing cancels, which would keep
 * jest alive for 15 minutes with the production 30 (2 s is what the test kernel gives every job).
 */
function pollingForTests(): PluginManifest {
  const sweepJob = (pollingPlugin.jobs ?? []).find((j) => j.name === "sweep")!;
  const jobs = (pollingPlugin.jobs ?? []).filter((j) => j !== sweepJob);
  const channels = pollingPlugin.channels ?? [];
  return definePlugin({
    ...(pollingPlugin as PluginManifest),
    jobs: [...jobs, { ...sweepJob, lockLifetimeMs: 2000 }],
    channels: channels.some((c) => c.name === SWEEP_CHANNEL.name) ? channels : [...channels, SWEEP_CHANNEL],
  });
}

let k: TestKernel;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};

const sql = (text: string, params: unknown[] = []) => rawQuery(k.databaseUrl!, text, params);
async function insertId(text: string, params: unknown[] = []): Promise<string> {
  return (await sql(text, params))[0].id as string;
}

/** Day partitions of polling.samples around now (named as the sink names them; IF NOT EXISTS, so the sink's own are fine). */
async function ensurePartitions(): Promise<void> {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  for (let d = today - 3 * DAY_MS; d <= today + DAY_MS; d += DAY_MS) {
    const name = `samples_${new Date(d).toISOString().slice(0, 10).replace(/-/g, "")}`;
    await sql(
      `CREATE TABLE IF NOT EXISTS polling.${name} PARTITION OF polling.samples FOR VALUES FROM ('${new Date(d).toISOString()}') TO ('${new Date(d + DAY_MS).toISOString()}')`,
    );
  }
}

/** Latest rows: [node, metric, ifindex, value, seconds ago]. */
async function latest(rows: [string, string, number, number, number?][]): Promise<void> {
  await sql(
    `INSERT INTO polling.latest (node_id, metric, ifindex, value, at)
     SELECT u.n, u.m, u.i, u.v, now() - make_interval(secs => u.ago) FROM unnest($1::uuid[], $2::text[], $3::int[], $4::float8[], $5::float8[]) AS u(n, m, i, v, ago)
     ON CONFLICT (node_id, metric, ifindex, row_key) DO UPDATE SET value = excluded.value, at = excluded.at`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3]), rows.map((r) => r[4] ?? 5)],
  );
}

/** History rows: [node, metric, ifindex, row, value, seconds ago] (at rounded to whole seconds so one poll shares it). */
async function samples(rows: [string, string, number, number, number, number][]): Promise<void> {
  await sql(
    `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, value, at)
     SELECT u.n, u.m, u.i, u.r, u.v, $7::timestamptz - make_interval(secs => u.ago) FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::float8[], $6::float8[]) AS u(n, m, i, r, v, ago)`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3]), rows.map((r) => r[4]), rows.map((r) => r[5]), NOW],
  );
}

let NOW: string;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingForTests()], overrides: { pluginConfig: { polling: { embeddedPoller: false } } } });
  NOW = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
  await ensurePartitions();
  ids.siteA = await insertId(`INSERT INTO inventory.node_groups (name) VALUES ('site-a') RETURNING id`);
  ids.rackA = await insertId(`INSERT INTO inventory.node_groups (name, parent_id) VALUES ('rack-a', $1) RETURNING id`, [ids.siteA]);
  ids.siteB = await insertId(`INSERT INTO inventory.node_groups (name) VALUES ('site-b') RETURNING id`);
  ids.core = await insertId(`INSERT INTO inventory.nodes (name, address, group_id) VALUES ('core-a', '10.1.0.1', $1) RETURNING id`, [ids.rackA]);
  ids.edge = await insertId(`INSERT INTO inventory.nodes (name, address, group_id) VALUES ('edge-b', '10.2.0.1', $1) RETURNING id`, [ids.siteB]);
  ids.root = await insertId(`INSERT INTO inventory.nodes (name, address) VALUES ('lab-root', '10.3.0.1') RETURNING id`);

  // core-a: two ports with names, aliases and speeds; edge-b: twelve small ports (for limits); lab-root: one port whose rate is stale.
  await sql(
    `INSERT INTO polling.interfaces (node_id, ifindex, if_name, if_alias, if_speed_bps, oper_up, last_polled_at) VALUES
       ($1, 1, 'Gi0/1', 'uplink to core', 10000000000, true, now()),
       ($1, 2, 'Gi0/2', NULL, 1000000000, false, now()),
       ($2, 5, 'eth5', 'lab', 100000000, true, now() - interval '2 hours')`,
    [ids.core, ids.root],
  );
  for (let i = 1; i <= 12; i++) {
    await sql(`INSERT INTO polling.interfaces (node_id, ifindex, if_name, if_speed_bps, oper_up) VALUES ($1, $2, $3, 1000000000, true)`, [
      ids.edge,
      i,
      `ge-0/0/${i}`,
    ]);
  }
  await latest([
    [ids.core, "if_in_bps", 1, 9e9],
    [ids.core, "if_out_bps", 1, 2e9],
    [ids.core, "if_in_bps", 2, 1e6],
    [ids.core, "if_out_bps", 2, 12e9], // out alone beats port 1's in
    [ids.core, "if_in_errors_ps", 1, 0.5],
    [ids.core, "if_out_errors_ps", 1, 0.25],
    [ids.core, "if_in_discards_ps", 2, 3],
    [ids.core, "if_util_in_pct", 1, 90],
    [ids.root, "if_in_bps", 5, 99e9, 7200], // stale: two hours old
    ...Array.from({ length: 12 }, (_, n): [string, string, number, number] => [ids.edge, "if_in_bps", n + 1, (n + 1) * 1000]),
    [ids.edge, "if_out_errors_ps", 3, 7],
  ]);
  // History of core-a port 1: two polls in the last 15 minutes, one 40 minutes ago, one 20 hours ago.
  await samples([
    [ids.core, "if_in_bps", 1, -1, 100, 300],
    [ids.core, "if_out_bps", 1, -1, 10, 300],
    [ids.core, "if_in_bps", 1, -1, 10, 600],
    [ids.core, "if_out_bps", 1, -1, 100, 600],
    [ids.core, "if_in_bps", 1, -1, 400, 2400],
    [ids.core, "if_out_bps", 1, -1, 0, 2400],
    [ids.core, "if_in_bps", 1, -1, 5000, 72000],
    [ids.core, "if_out_bps", 1, -1, 5000, 72000],
    // port 2 only in the last 15 minutes
    [ids.core, "if_in_bps", 2, -1, 50, 120],
    [ids.core, "if_out_bps", 2, -1, 50, 120],
    // edge-b port 3 (whose latest rate is fresh) has one poll 30 minutes ago
    [ids.edge, "if_in_bps", 3, -1, 7, 1800],
    // a table metric (CPU row 1) and a node-level one
    [ids.core, "cpu_load_pct", -1, 1, 20, 900],
    [ids.core, "cpu_load_pct", -1, 1, 40, 600],
    [ids.core, "cpu_load_pct", -1, 2, 99, 600],
    [ids.core, "sys_uptime_secs", -1, -1, 1234, 600],
  ]);
  tokens.viewer = await k.token("viewer");
  tokens.scopedA = await k.token("viewer", { folders: [ids.siteA] });
  tokens.scopedB = await k.token("viewer", { folders: [ids.siteB] });
});
afterAll(async () => {
  await k?.stop();
});

const top = (query: Record<string, string | number>, token = tokens.viewer) => k.http.get("/api/v1/metrics/interface-top").query(query).set(bearer(token));
const brief = (entries: { node_name: string; ifindex: number; value: number }[]) => entries.map((e) => [e.node_name, e.ifindex, e.value]);

describe("GET /metrics/interface-top", () => {
  it("throughput (latest) adds in and out, highest first, with the interface's name, alias and configured speed", async () => {
    const res = await top({ metric: "throughput", limit: 3 });
    expect(res.status).toBe(200);
    expect(res.body.partial).toBe(false);
    expect(res.body.entries).toEqual([
      { node_id: ids.core, node_name: "core-a", ifindex: 2, if_name: "Gi0/2", if_alias: null, if_speed_bps: 1000000000, value: 12e9 + 1e6 },
      { node_id: ids.core, node_name: "core-a", ifindex: 1, if_name: "Gi0/1", if_alias: "uplink to core", if_speed_bps: 10000000000, value: 11e9 },
      { node_id: ids.edge, node_name: "edge-b", ifindex: 12, if_name: "ge-0/0/12", if_alias: null, if_speed_bps: 1000000000, value: 12000 },
    ]);
  });

  it("in_bps and out_bps rank one direction; a rate older than an hour is left out of latest", async () => {
    expect(brief((await top({ metric: "in_bps", limit: 3 })).body.entries)).toEqual([
      ["core-a", 1, 9e9],
      ["core-a", 2, 1e6],
      ["edge-b", 12, 12000],
    ]);
    // lab-root's 99 Gbit/s is two hours old
    expect((await top({ metric: "in_bps", limit: 100 })).body.entries.map((e: { node_name: string }) => e.node_name)).not.toContain("lab-root");
    expect(brief((await top({ metric: "out_bps" })).body.entries)).toEqual([
      ["core-a", 2, 12e9],
      ["core-a", 1, 2e9],
    ]);
  });

  it("errors and discards add in and out per second", async () => {
    expect(brief((await top({ metric: "errors" })).body.entries)).toEqual([
      ["edge-b", 3, 7],
      ["core-a", 1, 0.75],
    ]);
    expect(brief((await top({ metric: "discards" })).body.entries)).toEqual([["core-a", 2, 3]]);
  });

  it("windowed aggregates read the sample history: averages add up per direction, maxima take one poll's in + out", async () => {
    // last 15 minutes: port 1 polls (100+10) and (10+100); port 2 one poll (50+50)
    expect(brief((await top({ metric: "throughput", agg: "avg_15m" })).body.entries)).toEqual([
      ["core-a", 1, 110],
      ["core-a", 2, 100],
    ]);
    expect(brief((await top({ metric: "throughput", agg: "max_15m" })).body.entries)).toEqual([
      ["core-a", 1, 110],
      ["core-a", 2, 100],
    ]);
    // last hour adds port 1's poll of 400+0 and edge-b port 3's 7 in
    expect(brief((await top({ metric: "throughput", agg: "max_1h" })).body.entries)).toEqual([
      ["core-a", 1, 400],
      ["core-a", 2, 100],
      ["edge-b", 3, 7],
    ]);
    expect(brief((await top({ metric: "in_bps", agg: "avg_1h" })).body.entries)).toEqual([
      ["core-a", 1, 170],
      ["core-a", 2, 50],
      ["edge-b", 3, 7],
    ]);
    // the poll of 20 hours ago is outside every window
    const hour = (await top({ metric: "throughput", agg: "max_1h", limit: 1 })).body.entries;
    expect(hour[0]).toMatchObject({ if_name: "Gi0/1", if_alias: "uplink to core", if_speed_bps: 10000000000, value: 400 });
    expect(brief((await top({ metric: "out_bps", agg: "avg_1h" })).body.entries)[0]).toEqual(["core-a", 2, 50]);
  });

  it("limit is clamped to 1..100 and defaults to 10", async () => {
    expect((await top({ metric: "in_bps" })).body.entries).toHaveLength(10);
    expect((await top({ metric: "in_bps", limit: 0 })).body.entries).toHaveLength(1);
    expect((await top({ metric: "in_bps", limit: -5 })).body.entries).toHaveLength(1);
    expect((await top({ metric: "in_bps", limit: 100000 })).body.entries).toHaveLength(14); // all there are (≤ 100)
  });

  it("a folder-scoped caller sees only its nodes, and the answer says partial", async () => {
    const a = await top({ metric: "throughput" }, tokens.scopedA);
    expect(a.body.partial).toBe(true);
    expect(new Set(a.body.entries.map((e: { node_id: string }) => e.node_id))).toEqual(new Set([ids.core]));
    const b = await top({ metric: "in_bps", limit: 100 }, tokens.scopedB);
    expect(b.body.partial).toBe(true);
    expect(b.body.entries).toHaveLength(12);
    expect(b.body.entries.every((e: { node_id: string }) => e.node_id === ids.edge)).toBe(true);
  });

  it("400 validation_failed for a missing or unknown metric, an unsupported agg or a non-integer limit; 401 without a token", async () => {
    expectError(await top({}), 400, "validation_failed");
    expectError(await top({ limit: 5 }), 400, "validation_failed");
    expectError(await top({ metric: "throughput", limit: "many" }), 400, "validation_failed");
    expect((await k.http.get("/api/v1/metrics/interface-top?metric=throughput")).status).toBe(401);
  });

  // The spec names no code for these ("400 metric not in the list or agg unsupported"): the route's enums answer them,
  // as validation_failed naming the parameter; no route-specific code (invalid_metric, unsupported_agg) exists for them.
  it.each([
    ["an unknown metric", { metric: "bogus" }, "metric"],
    ["a metric in the wrong case", { metric: "Throughput" }, "metric"],
    ["a history metric name", { metric: "if_in_bps" }, "metric"],
    ["an unsupported agg", { metric: "throughput", agg: "p95_1h" }, "agg"],
    ["a day-long agg", { metric: "throughput", agg: "avg_24h" }, "agg"],
    ["an empty agg", { metric: "throughput", agg: "" }, "agg"],
    ["a bad metric and a bad agg", { metric: "bogus", agg: "bogus" }, "metric"],
  ])("400 validation_failed for %s, naming the parameter", async (_label, query, param) => {
    const res = await top(query);
    expectError(res, 400, "validation_failed");
    expect(res.body.error.message).toContain(`"${param}"`);
    expect(res.body.error.message).not.toContain("bogus");
  });
});

describe("GET /nodes/{id}/interfaces", () => {
  it("lists a node's interfaces by ifindex with their latest rates", async () => {
    const res = await k.http.get(`/api/v1/nodes/${ids.core}/interfaces`).set(bearer(tokens.viewer));
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect(res.body[0]).toEqual({
      ifindex: 1,
      if_name: "Gi0/1",
      if_alias: "uplink to core",
      if_speed_bps: 10000000000,
      oper_up: true,
      in_bps: 9e9,
      out_bps: 2e9,
      in_errors_ps: 0.5,
      out_errors_ps: 0.25,
      in_discards_ps: null,
      out_discards_ps: null,
      util_in_pct: 90,
      util_out_pct: null,
      rates_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
      last_polled_at: expect.stringMatching(/Z$/),
    });
    expect(res.body[1]).toMatchObject({ ifindex: 2, oper_up: false, in_bps: 1e6, out_bps: 12e9, in_discards_ps: 3 });
  });

  it("a node without interfaces answers an empty list", async () => {
    const bare = await insertId(`INSERT INTO inventory.nodes (name, address) VALUES ('bare', '10.9.0.1') RETURNING id`);
    const res = await k.http.get(`/api/v1/nodes/${bare}/interfaces`).set(bearer(tokens.viewer));
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: [] });
  });

  it("404 for a missing node and for one outside the caller's scope; 400 for an id that is not a uuid", async () => {
    expectError(await k.http.get(`/api/v1/nodes/${MISSING}/interfaces`).set(bearer(tokens.viewer)), 404, "not_found");
    expectError(await k.http.get(`/api/v1/nodes/${ids.core}/interfaces`).set(bearer(tokens.scopedB)), 404, "not_found");
    expect((await k.http.get(`/api/v1/nodes/${ids.core}/interfaces`).set(bearer(tokens.scopedA))).status).toBe(200);
    expect((await k.http.get(`/api/v1/nodes/not-a-uuid/interfaces`).set(bearer(tokens.viewer))).status).toBe(400);
  });
});

describe("GET /nodes/{id}/metrics/{metric}/history", () => {
  const hist = (node: string, metric: string, query: Record<string, string | number> = {}, token = tokens.viewer) =>
    k.http.get(`/api/v1/nodes/${node}/metrics/${metric}/history`).query(query).set(bearer(token));
  const ago = (secs: number) => new Date(Date.parse(NOW) - secs * 1000).toISOString();

  it("raw samples of one interface, oldest first, within [from, to)", async () => {
    const res = await hist(ids.core, "if_in_bps", { ifindex: 1, from: ago(3600), to: ago(0) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ node_id: ids.core, metric: "if_in_bps", ifindex: 1, row: null, step: null });
    expect(res.body.points.map((p: { value: number }) => p.value)).toEqual([400, 10, 100]);
    expect(res.body.points[0]).toEqual({ at: ago(2400).replace(/\.000Z$/, ".000000Z"), value: 400, min: 400, max: 400, count: 1 });
    // to is exclusive
    expect((await hist(ids.core, "if_in_bps", { ifindex: 1, from: ago(3600), to: ago(600) })).body.points.map((p: { value: number }) => p.value)).toEqual([
      400,
    ]);
  });

  it("the default range is the hour before now; Unix seconds work as bounds", async () => {
    expect((await hist(ids.core, "if_out_bps", { ifindex: 1 })).body.points.map((p: { value: number }) => p.value)).toEqual([0, 100, 10]);
    const from = Math.floor(Date.parse(ago(86400)) / 1000);
    const res = await hist(ids.core, "if_out_bps", { ifindex: 1, from, to: Math.floor(Date.parse(NOW) / 1000) + 1 });
    expect(res.body.points.map((p: { value: number }) => p.value)).toEqual([5000, 0, 100, 10]);
  });

  it("step buckets by that many seconds with average, minimum, maximum and count", async () => {
    const res = await hist(ids.core, "if_in_bps", { ifindex: 1, from: ago(86400), to: ago(0), step: 86400 });
    expect(res.body.step).toBe(86400);
    const all = res.body.points as { value: number; min: number; max: number; count: number }[];
    expect(all.reduce((n, p) => n + p.count, 0)).toBe(4);
    expect(Math.max(...all.map((p) => p.max))).toBe(5000);
    expect(Math.min(...all.map((p) => p.min))).toBe(10);
    const fine = await hist(ids.core, "if_in_bps", { ifindex: 1, from: ago(3600), to: ago(0), step: 3600 });
    const sum = (fine.body.points as { value: number; count: number }[]).reduce((n, p) => n + p.value * p.count, 0);
    expect(sum).toBe(510);
  });

  it("row picks a table metric's row; no ifindex and no row is the node-level series", async () => {
    expect((await hist(ids.core, "cpu_load_pct", { row: 1 })).body.points.map((p: { value: number }) => p.value)).toEqual([20, 40]);
    expect((await hist(ids.core, "cpu_load_pct", { row: 2 })).body.points.map((p: { value: number }) => p.value)).toEqual([99]);
    expect((await hist(ids.core, "sys_uptime_secs")).body.points.map((p: { value: number }) => p.value)).toEqual([1234]);
    expect((await hist(ids.core, "if_in_bps")).body.points).toEqual([]);
  });

  it("400 for bounds that do not parse or are out of order, and for too many points", async () => {
    expectError(await hist(ids.core, "if_in_bps", { from: "yesterday" }), 400, "invalid_range");
    expectError(await hist(ids.core, "if_in_bps", { from: ago(0), to: ago(60) }), 400, "invalid_range");
    expectError(await hist(ids.core, "if_in_bps", { from: ago(60), to: ago(60) }), 400, "invalid_range");
    expectError(await hist(ids.core, "if_in_bps", { from: ago(30 * 86400), step: 60 }), 400, "too_many_points");
    expect((await hist(ids.core, "if_in_bps", { step: 0 })).status).toBe(400);
    expect((await hist(ids.core, "if_in_bps", { ifindex: -2 })).status).toBe(400);
    expectError(await hist(ids.core, "bad-metric!"), 400, "invalid_metric");
  });

  it("more raw samples than the cap is 400 too_many_points; a step answers the same range", async () => {
    await sql(
      `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, value, at)
       SELECT $1, 'dense', -1, -1, g, $2::timestamptz - make_interval(secs => g * 0.3) FROM generate_series(1, 10001) g`,
      [ids.edge, NOW],
    );
    expectError(await hist(ids.edge, "dense", { from: ago(3600), to: ago(-1) }), 400, "too_many_points");
    const res = await hist(ids.edge, "dense", { from: ago(3600), to: ago(-1), step: 60 });
    expect(res.status).toBe(200);
    expect((res.body.points as { count: number }[]).reduce((n, p) => n + p.count, 0)).toBe(10001);
  });

  it("404 for a node outside the scope or missing", async () => {
    expectError(await hist(ids.core, "if_in_bps", {}, tokens.scopedB), 404, "not_found");
    expectError(await hist(MISSING, "if_in_bps"), 404, "not_found");
  });
});

describe("GET /nodes/{id}/metrics (the node's series)", () => {
  const series = (node: string, query: Record<string, string> = {}, token: string | null = tokens.viewer) => {
    const req = k.http.get(`/api/v1/nodes/${node}/metrics`).query(query);
    return token === null ? req : req.set(bearer(token));
  };

  it("lists a node's latest series with interface, row and name, ordered by metric; metric keeps one", async () => {
    await sql(
      `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, row_name) VALUES
         ($1, 'storage_used_pct', -1, 3, 41.5, now(), 'Physical memory'), ($1, 'rtt_ms', -1, -1, 0.4, now(), NULL)
       ON CONFLICT DO NOTHING`,
      [ids.root],
    );
    const res = await series(ids.root);
    expect(res.status).toBe(200);
    expect(
      res.body.map((s: { metric: string; ifindex: number | null; row: number | null; name: string | null; value: number }) => [
        s.metric,
        s.ifindex,
        s.row,
        s.name,
        s.value,
      ]),
    ).toEqual([
      ["if_in_bps", 5, null, null, 99e9],
      ["rtt_ms", null, null, null, 0.4],
      ["storage_used_pct", null, 3, "Physical memory", 41.5],
    ]);
    expect(Date.parse(res.body[0].at)).toBeGreaterThan(0);
    const only = await series(ids.root, { metric: "storage_used_pct" });
    expect(only.body.map((s: { metric: string }) => s.metric)).toEqual(["storage_used_pct"]);
    // Each role may read (it is a read); an operator's and an admin's token as well.
    for (const role of ["operator", "admin"] as const) expect((await series(ids.root, {}, await k.token(role))).status).toBe(200);
  });

  it("401 without a token or with a bad one; 404 outside the folder scope or missing; 400 for a bad metric or id", async () => {
    expect((await series(ids.core, {}, null)).status).toBe(401);
    expect((await series(ids.core, {}, "not-a-token")).status).toBe(401);
    expect((await series(ids.core, {}, tokens.scopedA)).status).toBe(200);
    expectError(await series(ids.core, {}, tokens.scopedB), 404, "not_found");
    expectError(await series(MISSING), 404, "not_found");
    expectError(await series(ids.core, { metric: "bad-metric!" }), 400, "invalid_metric");
    expect((await series("not-a-uuid")).status).toBe(400);
  });
});

describe("OpenAPI", () => {
  it("documents the metric and agg vocabularies of interface-top and the reads' answers", async () => {
    const spec = (await k.http.get("/api/v1/openapi.json")).body as {
      paths: Record<string, { get: { parameters: { name: string; schema: { enum?: string[] } }[]; description: string } }>;
    };
    const top = spec.paths["/api/v1/metrics/interface-top"].get;
    expect(top.parameters.find((p) => p.name === "metric")?.schema.enum).toEqual(["throughput", "in_bps", "out_bps", "errors", "discards"]);
    expect(top.parameters.find((p) => p.name === "agg")?.schema.enum).toEqual(["latest", "avg_15m", "max_15m", "avg_1h", "max_1h"]);
    expect(top.description).toContain("clamped to 1..100, default 10");
    expect(spec.paths["/api/v1/nodes/{id}/interfaces"]).toBeDefined();
    expect(spec.paths["/api/v1/nodes/{id}/metrics/{metric}/history"].get.description).toContain("too_many_points");
  });
});
