// The hot read routes (and the other lists that grow: open alerts, transitions, thresholds, mutes, folders, the
// interface search, the event statistics) answered through the compiled JSON writer and through Ts.ED's json-mapper (the writer switched
// off) on one kernel and one database: status, every header (Content-Type, Content-Length, ETag, X-Next-Cursor, …)
// and every body byte must be the same, for pages of varied rows (nulls, unicode, escapes, JSON data, acks), a cursor
// page, a folder-scoped caller, Accept variants, HEAD and a conditional GET (304).
import { request } from "node:http";
import { DayPartitions } from "../../core/index.js";
import { fastJsonStats, setFastJsonEnabled } from "../../core/http/fastJson.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { insertActive, insertHistory } from "../../plugins/alerts/test/readSupport.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { rawQuery } from "../support/db.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
let db: string;
let viewerA: string;

const NASTY = ["ünïcödé — ✓", "日本語", "emoji 😀", 'q"uote \\ back', "line\nbreak\ttab", "\u2028\u2029", "</script>", ""];

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: false } } },
  });
  db = k.databaseUrl!;
  const [a, b] = await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name) VALUES ('site ä'), ('site b') RETURNING id");
  viewerA = await k.token("viewer", { folders: [a!.id] });
  // 150 nodes: names and free text with unicode and escapes, nullable columns null or not, tags, fractional order.
  await rawQuery(
    db,
    `INSERT INTO inventory.nodes (name, address, group_id, pool, vendor, model, snmp_port, notes, tags, tags_excluded, profile_locked, sort_order,
                                  sys_object_id, sys_descr, sys_name)
     SELECT 'node ' || lpad(n::text, 3, '0') || ' ' || ($3::text[])[1 + n % 8], ('10.9.' || (n / 200) || '.' || (n % 200 + 1))::inet,
            CASE n % 3 WHEN 0 THEN $1::uuid WHEN 1 THEN $2::uuid END, CASE WHEN n % 4 = 0 THEN 'pool_' || (n % 3) END,
            CASE WHEN n % 2 = 0 THEN 'Cisco' END, CASE WHEN n % 5 = 0 THEN ($3::text[])[1 + n % 8] END, 161 + n % 3,
            CASE WHEN n % 3 = 0 THEN 'notes ' || ($3::text[])[1 + (n * 7) % 8] END,
            CASE WHEN n % 2 = 0 THEN ARRAY['core', ($3::text[])[1 + n % 8]] ELSE '{}' END, CASE WHEN n % 7 = 0 THEN ARRAY['edge'] ELSE '{}' END,
            n % 6 = 0, n / 7.0, CASE WHEN n % 2 = 0 THEN '1.3.6.1.4.1.9.1.' || n END, CASE WHEN n % 3 = 1 THEN 'IOS ' || ($3::text[])[1 + n % 8] END,
            CASE WHEN n % 4 = 1 THEN 'sys-' || n END
       FROM generate_series(1, 150) n`,
    [a!.id, b!.id, NASTY],
  );
  const nodes = (await rawQuery<{ id: string }>(db, "SELECT id FROM inventory.nodes ORDER BY name")).map((r) => r.id);
  // 250 history rows: node and pool subjects, nulls, fires and clears; acks with and without notes on some incidents.
  const now = Date.now();
  const rows = await insertHistory(
    db,
    Array.from({ length: 250 }, (_, i) => {
      const node = i % 5 === 4 ? null : nodes[i % nodes.length]!;
      return {
        recorded_at: new Date(now - i * 61_000).toISOString(),
        node_id: node,
        subject_kind: node ? "node" : "pool",
        subject_name: node ? null : "default",
        metric: i % 6 === 0 ? null : i % 2 ? "if_in_util_pct" : "cpu_util",
        direction: i % 6 === 0 ? null : "above",
        ifindex: i % 2 ? i % 48 : null,
        if_name: i % 2 ? `Gi0/${i % 48} ${NASTY[i % 8]}` : null,
        observed_value: i % 6 === 0 ? null : 90 + i / 3,
        threshold_value: i % 6 === 0 ? null : 90,
        resolved: i % 3 === 0,
        row_key: i % 9 === 0 ? i : null,
        row_name: i % 9 === 0 ? `row ${NASTY[i % 8]}` : null,
        severity: ["info", "warning", "critical"][i % 3],
        state: ["warning", "critical", "unreachable"][i % 3],
        title: i % 10 === 0 ? null : `Alert ${NASTY[i % 8]}`,
      };
    }),
  );
  for (const r of rows.filter((_, i) => i % 4 === 1)) {
    await rawQuery(db, "INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, note) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", [
      r.incident_key,
      r.severity,
      r.node_id,
      "ops ü",
      r.id.endsWith("0") ? null : `note ${NASTY[r.id.charCodeAt(0) % 8]}`,
    ]);
  }
  // 60 open incidents (node and pool subjects, ports, rows, null titles), some acknowledged.
  for (let i = 0; i < 60; i++) {
    const node = i % 6 === 5 ? null : nodes[(i * 7) % nodes.length]!;
    const active = await insertActive(db, {
      node_id: node,
      subject_name: node ? null : `pool ${NASTY[i % 8]}`,
      metric: i % 5 === 0 ? null : i % 2 ? "if_in_util_pct" : "cpu_util",
      ifindex: i % 2 ? i % 48 : null,
      if_name: i % 2 ? `Gi0/${i % 48} ${NASTY[i % 8]}` : null,
      row_key: i % 9 === 0 ? i : null,
      row_name: i % 9 === 0 ? `row ${NASTY[i % 8]}` : null,
      severity: ["info", "warning", "critical"][i % 3],
      state: i % 3 === 2 && i % 4 === 0 ? "unreachable" : ["warning", "warning", "critical"][i % 3],
      title: i % 10 === 0 ? null : `Active ${NASTY[i % 8]}`,
      fired_at: new Date(now - i * 37_000).toISOString(),
    });
    if (i % 3 === 1) {
      await rawQuery(db, "INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, note) VALUES ($1, $2, $3, $4, $5)", [
        active.incident_key,
        ["info", "warning", "critical"][i % 3],
        node,
        `ops ${NASTY[i % 8]}`,
        i % 2 ? null : `note ${NASTY[(i + 3) % 8]}`,
      ]);
    }
  }
  // Threshold rules through the API (its normalisation), and mutes on some nodes, live and expired.
  for (const [i, metric] of ["cpu_load_pct", "storage_used_pct", "if_in_util_pct", "mem_used_pct"].entries()) {
    const res = await k.http
      .post("/api/v1/thresholds")
      .set({ Authorization: `Bearer ${k.adminToken}` })
      .send(
        i % 2
          ? { metric, scope_level: "global", direction: "below", warning: 30 + i, critical: 20 + i }
          : { metric, scope_level: "global", direction: "above", warning: 80 - i, critical: 90 - i },
      );
    expect([res.status, res.body]).toEqual([201, { id: expect.any(String) }]);
  }
  await rawQuery(
    db,
    `INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by)
     SELECT ($1::uuid[])[n], CASE WHEN n % 2 = 0 THEN 'cpu_util' ELSE 'if_in_util_pct' END, 'work ' || ($2::text[])[1 + n % 8],
            now() + (CASE WHEN n % 5 = 0 THEN -1 ELSE n END) * interval '1 hour', 'ops ü'
       FROM generate_series(1, 40) n`,
    [nodes, NASTY],
  );
  // 150 events: syslog and traps, JSON data, raw text, nullable columns.
  await new DayPartitions(k.context("events").store, "events").ensure([now - 3_600_000, now]);
  await rawQuery(
    db,
    `INSERT INTO events.events (id, received_at, kind, transport, listener, source_ip, node_id, severity, facility, host, app, msgid, message, trap_oid,
                                data, raw, malformed, action)
     SELECT gen_random_uuid(), now() - g * interval '1 second', CASE WHEN g % 5 = 0 THEN 'trap' ELSE 'syslog' END, 'udp', 'syslog.udp',
            CASE WHEN g % 4 <> 0 THEN ('10.9.0.' || (g % 200 + 1))::inet END, CASE WHEN g % 3 = 0 THEN NULL ELSE ($1::uuid[])[1 + g % 150] END,
            g % 8, CASE WHEN g % 5 = 0 THEN NULL ELSE g % 24 END, 'host-' || g, CASE WHEN g % 2 = 0 THEN 'sshd' END, CASE WHEN g % 7 = 0 THEN 'ID47' END,
            'message ' || ($2::text[])[1 + g % 8] || ' ' || g, CASE WHEN g % 5 = 0 THEN '1.3.6.1.6.3.1.1.5.3' END,
            CASE WHEN g % 5 = 0 THEN jsonb_build_object('varbinds', jsonb_build_array(jsonb_build_object('oid', '1.3.6.1.2.1.2.2.1.1', 'value', g, 'text', ($2::text[])[1 + g % 8])), 'v1', false)
                 WHEN g % 3 = 0 THEN '{"structured_data": {"a": [1, 2.5, null]}, "10": "ten"}'::jsonb END,
            CASE WHEN g % 11 = 0 THEN '<13>raw ' || ($2::text[])[1 + g % 8] END, g % 11 = 0, 'stored'
       FROM generate_series(1, 150) g`,
    [nodes, NASTY],
  );
  // Latest interface rates (interface-top), some interfaces with a name, alias and speed.
  await rawQuery(
    db,
    `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, if_name)
     SELECT n.id, m, i, -1, (abs(hashtext(n.id::text || i || m)) % 1000000)::float8 / 7, now(), CASE WHEN i % 2 = 0 THEN 'Gi0/' || i END
       FROM inventory.nodes n CROSS JOIN generate_series(1, 4) i CROSS JOIN unnest(ARRAY['if_in_bps', 'if_out_bps']) m`,
  );
  await rawQuery(
    db,
    `INSERT INTO polling.interfaces (node_id, ifindex, if_name, if_alias, if_speed_bps)
     SELECT n.id, 1, 'Gi0/1 ' || ($1::text[])[1 + abs(hashtext(n.id::text)) % 8], CASE WHEN abs(hashtext(n.id::text)) % 2 = 0 THEN 'uplink ü' END, 1000000000
       FROM inventory.nodes n`,
    [NASTY],
  );
}, 120_000);

afterAll(async () => {
  setFastJsonEnabled(true);
  await k?.stop();
});

/**
 * Status, headers (but the ones that change per request) and body bytes of one request, over node:http (fetch would add
 * Cache-Control: no-cache to a conditional request, which Express then never answers 304).
 */
function answer(method: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: [string, string][]; body: string }>((resolve, reject) => {
    const req = request(`${k.url}/api/v1${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const kept = Object.entries(res.headers)
          .filter(([name]) => !["date", "x-request-id"].includes(name))
          .map(([name, value]) => [name, String(value)] as [string, string]);
        resolve({ status: res.statusCode!, headers: kept, body: Buffer.concat(chunks).toString("latin1") });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The same request with the writer and with the mapper; returns the writer's answer. */
async function same(method: string, path: string, headers: Record<string, string> = {}) {
  setFastJsonEnabled(false);
  const generic = await answer(method, path, headers);
  setFastJsonEnabled(true);
  const fast = await answer(method, path, headers);
  expect({ path, ...fast }).toEqual({ path, ...generic });
  return fast;
}

const ROUTES = [
  "/nodes?limit=100",
  "/nodes?limit=7&q=%C3%BC",
  "/alerts/history?limit=100",
  "/alerts/history?limit=30&severity=critical",
  "/events?limit=100",
  "/events?limit=20&kind=trap",
  "/metrics/interface-top?metric=throughput&limit=10",
  "/metrics/interface-top?metric=in_bps&limit=100",
  "/metrics/interface-top?metric=errors",
  "/alerts",
  "/alerts/transitions?limit=100",
  "/thresholds?limit=100",
  "/mutes?limit=100",
  "/mutes?limit=5",
  "/node-groups?limit=100",
  "/interfaces?q=gi0&limit=100",
  "/events/stats?group_by=kind",
  "/events/stats?group_by=source&limit=50",
  "/events/stats?group_by=trap",
  "/events/stats?group_by=time&split=kind",
  "/events/stats?group_by=time",
];

describe("hot routes: the compiled writer answers the json-mapper's bytes", () => {
  it.each(ROUTES)("%s: same status, headers and bytes (admin, folder-scoped viewer)", async (path) => {
    const before = fastJsonStats.written;
    const res = await same("GET", path, { Authorization: `Bearer ${k.adminToken}` });
    expect(res.status).toBe(200);
    await same("GET", path, { Authorization: `Bearer ${viewerA}` });
    // Both answers came from the writer (none was left to the mapper).
    expect(fastJsonStats.written - before).toBe(2);
  });

  it("pages with rows: a node list's next page through X-Next-Cursor, non-empty history, events and tops", async () => {
    const auth = { Authorization: `Bearer ${k.adminToken}` };
    const first = await same("GET", "/nodes?limit=100", auth);
    const cursor = first.headers.find(([n]) => n === "x-next-cursor")?.[1];
    expect(cursor).toBeDefined();
    const second = await same("GET", `/nodes?limit=100&cursor=${encodeURIComponent(cursor!)}`, auth);
    expect(JSON.parse(second.body)).toHaveLength(50);
    expect(JSON.parse((await same("GET", "/alerts/history?limit=100", auth)).body).some((r: { acked: unknown }) => r.acked)).toBe(true);
    expect(JSON.parse((await same("GET", "/events?limit=100", auth)).body).some((r: { data: unknown }) => r.data)).toBe(true);
    expect(JSON.parse((await same("GET", "/metrics/interface-top?metric=throughput&limit=10", auth)).body).entries).toHaveLength(10);
    // The lists added later: rows in each, acks and pool subjects among the open incidents, a mutes cursor page.
    const active = JSON.parse((await same("GET", "/alerts", auth)).body) as { acked: unknown; node: unknown }[];
    expect(active).toHaveLength(60);
    expect(active.some((r) => r.acked) && active.some((r) => r.node === null)).toBe(true);
    expect(JSON.parse((await same("GET", "/alerts/transitions?limit=100", auth)).body)).toHaveLength(100);
    expect(JSON.parse((await same("GET", "/thresholds?limit=100", auth)).body)).toHaveLength(4);
    expect(JSON.parse((await same("GET", "/node-groups?limit=100", auth)).body)).toHaveLength(2);
    expect(JSON.parse((await same("GET", "/interfaces?q=gi0&limit=100", auth)).body)).toHaveLength(100);
    const mutes = await same("GET", "/mutes?limit=20", auth);
    expect(JSON.parse(mutes.body)).toHaveLength(20);
    const next = mutes.headers.find(([n]) => n === "x-next-cursor")?.[1];
    expect(JSON.parse((await same("GET", `/mutes?limit=20&cursor=${encodeURIComponent(next!)}`, auth)).body)).toHaveLength(12);
    const buckets = JSON.parse((await same("GET", "/events/stats?group_by=time&split=kind", auth)).body) as { by_kind: object }[];
    expect(buckets.length).toBeGreaterThan(0);
    expect(buckets.every((b) => b.by_kind && typeof b.by_kind === "object")).toBe(true);
  });

  it("Accept variants, HEAD and a conditional GET answer the same", async () => {
    const auth = { Authorization: `Bearer ${k.adminToken}` };
    for (const accept of ["application/json", "*/*", "text/html", "application/xml;q=0.9, */*;q=0.1", "text/plain"]) {
      await same("GET", "/alerts/history?limit=10", { ...auth, Accept: accept });
      await same("GET", "/metrics/interface-top?metric=throughput", { ...auth, Accept: accept });
    }
    await same("HEAD", "/nodes?limit=10", auth);
    const etag = (await same("GET", "/events?limit=10", auth)).headers.find(([n]) => n === "etag")?.[1];
    expect(etag).toMatch(/^W\//);
    expect((await same("GET", "/events?limit=10", { ...auth, "If-None-Match": etag! })).status).toBe(304);
  });

  it("refusals are untouched: 400, 401", async () => {
    expect((await same("GET", "/nodes?limit=0", { Authorization: `Bearer ${k.adminToken}` })).status).toBe(400);
    expect((await same("GET", "/alerts/history?limit=10")).status).toBe(401);
  });
});
