/**
 * The remote pollers' HTTP side: registration, heartbeats, assignment, samples, and the
 * offline/online cycle with a monitoring gap recorded (heartbeatAllowanceSecs: 5, the minimum).
 */
import type { PluginContext } from "../../../core/index.js";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import type { PollerEvent, Sample } from "../contract.js";
import { pollingPlugin } from "../index.js";
import { MAX_SAMPLES_PER_POST } from "../poller/wire.js";
import { until } from "../../../test/support/wait.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let k: TestKernel;
let ctx: PluginContext;
let admin: string;

async function post(path: string, body: object): Promise<string> {
  const res = await k.http.post(path).set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const register = (body: object, token = admin) => k.http.post("/api/v1/pollers/register").set(bearer(token)).send(body);
const heartbeat = (id: string, body: object = {}, token = admin) => k.http.post(`/api/v1/pollers/${id}/heartbeat`).set(bearer(token)).send(body);
const samples = (id: string, body: object, token = admin) => k.http.post(`/api/v1/pollers/${id}/samples`).set(bearer(token)).send(body);

function events<E extends "polling.poller.online" | "polling.poller.offline" | "polling.sample">(name: E) {
  const got: unknown[] = [];
  const off = ctx.bus.on(name, (e) => void got.push(e));
  return { got, off };
}

function sampleFor(node: string, metric: string, value: number, at: number): Sample {
  return {
    node_id: node,
    metric,
    value,
    at_unix_ms: at,
    ifindex: null,
    if_name: null,
    row: null,
    row_name: null,
    pool: "ignored",
    poller_id: "ignored",
    backfill: false,
  };
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: false, heartbeatAllowanceSecs: 5 } } },
  });
  ctx = k.kernel.context("polling")!;
  admin = await k.token("admin");
});
afterAll(() => k?.stop());

describe("access", () => {
  it("answers 401 without a token, 403 without ManageSystem, 403 scope_unsupported for a folder-scoped admin", async () => {
    const routes = [
      () => k.http.get("/api/v1/pollers"),
      () => k.http.post("/api/v1/pollers/register").send({ poller_id: "p", pool: "x" }),
      () => k.http.get("/api/v1/pollers/p/assignment"),
      () => k.http.post("/api/v1/pollers/p/heartbeat").send({}),
      () => k.http.post("/api/v1/pollers/p/samples").send({ samples: [], backfill: false }),
    ];
    for (const r of routes) expectError(await r(), 401, "unauthorized");
    const operator = await k.token("operator");
    for (const r of routes) expectError(await r().set(bearer(operator)), 403, "permission_denied");
    const folder = await post("/api/v1/node-groups", { name: "scoped-site" });
    const scopedAdmin = await k.token("admin", { folders: [folder] });
    expectError(await register({ poller_id: "scoped", pool: "x" }, scopedAdmin), 403, "scope_unsupported");
    expectError(await k.http.get("/api/v1/pollers/scoped/assignment").set(bearer(scopedAdmin)), 403, "scope_unsupported");
  });
});

describe("registration and heartbeats", () => {
  it("registers a poller and tells it how often to heartbeat", async () => {
    const online = events("polling.poller.online");
    const res = await register({ poller_id: "east-1", pool: "east", version: "0.1.0", listeners: ["syslog/udp:5514"] });
    online.off();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ poller_id: "east-1", pool: "east", heartbeat_secs: 1 });
    expect(online.got).toEqual([{ poller_id: "east-1", pool: "east", at_unix_ms: expect.any(Number) }]);
    const list = await k.http.get("/api/v1/pollers").set(bearer(admin));
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        id: "east-1",
        pool: "east",
        kind: "remote",
        version: "0.1.0",
        listeners: ["syslog/udp:5514"],
        registered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        last_seen_at: expect.any(String),
        online: true,
      },
    ]);
  });

  it("refuses bad registrations: invalid_pool, a malformed id, unknown fields, the embedded poller's id", async () => {
    expectError(await register({ poller_id: "x1", pool: "has space" }), 400, "invalid_pool");
    expectError(await register({ poller_id: "x1", pool: "p".repeat(64) }), 400, "invalid_pool");
    expectError(await register({ poller_id: "bad/id", pool: "east" }), 400, "validation_failed");
    expectError(await register({ poller_id: "x1", pool: "east", color: "red" }), 400, "validation_failed");
    expectError(await register({ pool: "east" }), 400, "validation_failed");
    await rawQuery(k.databaseUrl!, "INSERT INTO polling.pollers (id, pool, kind) VALUES ('core', 'default', 'embedded') ON CONFLICT DO NOTHING");
    expectError(await register({ poller_id: "core", pool: "east" }), 409, "poller_id_reserved");
  });

  it("takes heartbeats with telemetry; a poller that never registered gets 404", async () => {
    const telemetry = { cpu_pct: 12.5, load1: 0.4, mem_total_bytes: 8e9, mem_used_bytes: 2e9, disks: [{ mount: "/", size_bytes: 1e11, used_bytes: 4e10 }] };
    const res = await heartbeat("east-1", { telemetry });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ heartbeat_secs: 1 });
    const rows = await rawQuery(k.databaseUrl!, "SELECT telemetry FROM polling.pollers WHERE id = 'east-1'");
    expect(rows[0].telemetry).toEqual(telemetry);
    // A heartbeat without telemetry keeps the last one reported.
    expect((await heartbeat("east-1", {})).status).toBe(200);
    expect((await rawQuery(k.databaseUrl!, "SELECT telemetry FROM polling.pollers WHERE id = 'east-1'"))[0].telemetry).toEqual(telemetry);
    expectError(await heartbeat("nobody", {}), 404, "not_found");
    expectError(await heartbeat("east-1", { telemetry: { ...telemetry, cpu_pct: 140 } }), 400, "validation_failed");
  });

  it("marks a silent poller offline, and records a gap with its listeners when it comes back", async () => {
    const offline = events("polling.poller.offline");
    const online = events("polling.poller.online");
    expect((await register({ poller_id: "west-1", pool: "west", listeners: ["syslog/udp:5514", "traps/udp:5162"] })).status).toBe(200);
    const seen = (await rawQuery<{ t: string }>(k.databaseUrl!, "SELECT last_seen_at::text AS t FROM polling.pollers WHERE id = 'west-1'"))[0].t;
    // No heartbeat: the watch job (every 5 s) finds it silent past the 5 s allowance.
    await until("west-1 offline", async () => {
      const r = await rawQuery<{ online: boolean }>(k.databaseUrl!, "SELECT online FROM polling.pollers WHERE id = 'west-1'");
      return r[0].online === false;
    });
    expect((offline.got as PollerEvent[]).filter((e) => e.poller_id === "west-1")).toEqual([
      { poller_id: "west-1", pool: "west", at_unix_ms: expect.any(Number) },
    ]);
    const listed = await k.http.get("/api/v1/pollers").set(bearer(admin));
    expect(listed.body.find((p: { id: string }) => p.id === "west-1").online).toBe(false);

    online.got.length = 0;
    const back = await heartbeat("west-1", {});
    expect(back.status).toBe(200);
    online.off();
    offline.off();
    expect(online.got).toEqual([{ poller_id: "west-1", pool: "west", at_unix_ms: expect.any(Number) }]);
    const gaps = await rawQuery(
      k.databaseUrl!,
      "SELECT pool, listeners, started_at::text AS started, ended_at > started_at AS ordered, extract(epoch FROM ended_at - started_at) AS secs FROM polling.monitoring_gaps WHERE poller_id = 'west-1'",
    );
    expect(gaps).toEqual([{ pool: "west", listeners: ["syslog/udp:5514", "traps/udp:5162"], started: seen, ordered: true, secs: expect.anything() }]);
    expect(Number(gaps[0].secs)).toBeGreaterThanOrEqual(5);
    const api = await k.http.get("/api/v1/monitoring-gaps").set(bearer(await k.token("viewer")));
    expect(api.body[0]).toMatchObject({ poller_id: "west-1", pool: "west", listeners: ["syslog/udp:5514", "traps/udp:5162"] });
    expect(api.body[0].duration_secs).toBeGreaterThanOrEqual(5);
    expect((await rawQuery(k.databaseUrl!, "SELECT online FROM polling.pollers WHERE id = 'west-1'"))[0].online).toBe(true);
  }, 40000);

  it("records a gap for a poller back after its allowance even before the watch job noticed, and none for a quick restart", async () => {
    expect((await register({ poller_id: "north-1", pool: "north" })).status).toBe(200);
    expect((await register({ poller_id: "north-1", pool: "north" })).status).toBe(200);
    expect(await rawQuery(k.databaseUrl!, "SELECT 1 FROM polling.monitoring_gaps WHERE poller_id = 'north-1'")).toEqual([]);
    await rawQuery(k.databaseUrl!, "UPDATE polling.pollers SET last_seen_at = now() - interval '90 seconds' WHERE id = 'north-1'");
    expect((await register({ poller_id: "north-1", pool: "north" })).status).toBe(200);
    const gaps = await rawQuery<{ secs: string }>(
      k.databaseUrl!,
      "SELECT floor(extract(epoch FROM ended_at - started_at))::int AS secs FROM polling.monitoring_gaps WHERE poller_id = 'north-1'",
    );
    expect(gaps).toHaveLength(1);
    expect(Number(gaps[0].secs)).toBeGreaterThanOrEqual(90);
  });
});

describe("assignment", () => {
  it("gives a registered poller the targets of its pool; 404 for an unknown poller", async () => {
    const folder = await post("/api/v1/node-groups", { name: "south-site", pool: "south" });
    const a = await post("/api/v1/nodes", { name: "south-a", address: "10.40.0.1", group_id: folder });
    await post("/api/v1/nodes", { name: "elsewhere", address: "10.40.0.2" });
    expect((await register({ poller_id: "south-1", pool: "south" })).status).toBe(200);
    const res = await k.http.get("/api/v1/pollers/south-1/assignment").set(bearer(admin));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        node_id: a,
        name: "south-a",
        address: "10.40.0.1",
        snmp_port: 161,
        pool: "south",
        interval_secs: 60,
        snmp: null,
        templates: [],
        url_check: null,
        dns_check: null,
      },
    ]);
    expectError(await k.http.get("/api/v1/pollers/nobody/assignment").set(bearer(admin)), 404, "not_found");
  });
});

describe("samples", () => {
  let node: string;
  beforeAll(async () => {
    node = await post("/api/v1/nodes", { name: "sampled", address: "10.50.0.1" });
    expect((await register({ poller_id: "sampler-1", pool: "samplers" })).status).toBe(200);
  });

  it("stores samples stamped with the poller's id and pool, and announces them (backfill flagged)", async () => {
    const bus = events("polling.sample");
    const at = Date.now() - 5000;
    const live = await samples("sampler-1", { samples: [sampleFor(node, "rtt_ms", 1.5, at)], backfill: false });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ ok: true, samples: 1 });
    const back = await samples("sampler-1", { samples: [sampleFor(node, "rtt_ms", 2.5, at - 60000)], backfill: true });
    expect(back.status).toBe(200);
    bus.off();
    const got = (bus.got as { samples: Sample[] }[]).map((e) => e.samples[0]);
    expect(got).toEqual([
      expect.objectContaining({ value: 1.5, pool: "samplers", poller_id: "sampler-1", backfill: false }),
      expect.objectContaining({ value: 2.5, pool: "samplers", poller_id: "sampler-1", backfill: true }),
    ]);
    const rows = await rawQuery(k.databaseUrl!, "SELECT value FROM polling.samples WHERE node_id = $1 ORDER BY at", [node]);
    expect(rows.map((r) => r.value)).toEqual([2.5, 1.5]);
  });

  it("answers 400 beyond the per-request cap and for malformed samples; 404 for an unknown poller", async () => {
    const at = Date.now();
    const tooMany = Array.from({ length: MAX_SAMPLES_PER_POST + 1 }, (_, i) => sampleFor(node, "rtt_ms", i, at + i));
    expectError(await samples("sampler-1", { samples: tooMany, backfill: false }), 400, "validation_failed");
    expectError(await samples("sampler-1", { samples: [{ ...sampleFor(node, "rtt_ms", 1, at), node_id: "nope" }], backfill: false }), 400, "validation_failed");
    expectError(await samples("sampler-1", { samples: [sampleFor(node, "9bad name", 1, at)], backfill: false }), 400, "validation_failed");
    expectError(await samples("sampler-1", { samples: [{ ...sampleFor(node, "rtt_ms", 1, at), ifindex: 1.5 }], backfill: false }), 400, "validation_failed");
    expectError(await samples("sampler-1", { samples: [] }), 400, "validation_failed");
    expectError(await samples("nobody", { samples: [], backfill: false }), 404, "not_found");
    const stored = await rawQuery(k.databaseUrl!, "SELECT count(*)::int AS n FROM polling.samples WHERE node_id = $1 AND at >= to_timestamp($2 / 1000.0)", [
      node,
      at,
    ]);
    expect(stored[0].n).toBe(0);
  });
});
