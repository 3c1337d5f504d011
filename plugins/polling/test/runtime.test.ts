/**
 * The poller runtime inside the core: assignments by effective pool, the sample sink (latest,
 * day partitions, bus, batching, backfill, retention), and the poll loop against real SNMP agents
 * (snmpsim) and the embedded poller with the production probes.
 */
import { jest } from "@jest/globals";
import type { PluginContext } from "../../../core/index.js";
import { rawQuery } from "../../../test/support/db.js";
import { startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../../../test/support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import type { Sample } from "../contract.js";
import { pollingPlugin, type PollingConfig } from "../index.js";
import { PollLoop } from "../poller/PollLoop.js";
import { defaultProbes } from "../poller/probes.js";
import type { PollTarget } from "../poller/types.js";
import { emptyBatch, type PollBatch } from "../poller/wire.js";
import { partitionName, dayStart, SampleRepository } from "../repositories/SampleRepository.js";
import { AssignmentService } from "../services/AssignmentService.js";
import { CollectionTemplateService } from "../services/CollectionTemplateService.js";
import { EmbeddedPoller } from "../services/EmbeddedPoller.js";
import { SampleSink } from "../services/SampleSink.js";
import { until } from "../../../test/support/wait.js";

const DAY = 86_400_000;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const get = <T>(token: new (...args: never[]) => T): T => k.kernel.context("polling")!.get(token);

let k: TestKernel;
let ctx: PluginContext<PollingConfig>;

async function post(path: string, body: object): Promise<string> {
  const res = await k.http.post(path).set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body.id as string;
}

function sample(node: string, metric: string, value: number, at: number, where: Partial<Sample> = {}): Sample {
  return {
    node_id: node,
    metric,
    value,
    at_unix_ms: at,
    ifindex: null,
    if_name: null,
    row: null,
    row_name: null,
    pool: "x",
    poller_id: "x",
    backfill: false,
    ...where,
  };
}

function batchOf(samples: Sample[], extra: Partial<PollBatch> = {}): PollBatch {
  return { ...emptyBatch(false), samples, ...extra };
}

/** Collects bus events of one kind until the returned stop() is called. */
function collect<E extends "polling.sample" | "polling.reachability">(event: E) {
  const got: unknown[] = [];
  const off = ctx.bus.on(event, (payload) => void got.push(payload));
  return { got, off };
}

const source = { poller_id: "test-poller", pool: "default" };

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: false, defaultIntervalSecs: 5, retentionDays: 5 } } },
  });
  ctx = k.kernel.context("polling") as PluginContext<PollingConfig>;
});

afterAll(async () => {
  await get(EmbeddedPoller)
    ?.stop()
    .catch(() => undefined);
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("assignment", () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ids.edge = await post("/api/v1/node-groups", { name: "edge-site", pool: "edge" });
    ids.plain = await post("/api/v1/node-groups", { name: "plain-site" });
    ids.inEdge = await post("/api/v1/nodes", { name: "edge-sw", address: "10.20.0.1", group_id: ids.edge });
    ids.ownPool = await post("/api/v1/nodes", { name: "lab-sw", address: "10.20.0.2", group_id: ids.edge, pool: "lab" });
    ids.root = await post("/api/v1/nodes", { name: "root-sw", address: "10.20.0.3" });
    ids.inPlain = await post("/api/v1/nodes", { name: "plain-sw", address: "2001:db8::20", group_id: ids.plain });
  });

  it("gives a pool the nodes whose effective pool it is (own pool, else the folder's, else default)", async () => {
    const svc = get(AssignmentService);
    expect((await svc.targets("edge")).map((t) => t.name)).toEqual(["edge-sw"]);
    expect((await svc.targets("lab")).map((t) => t.name)).toEqual(["lab-sw"]);
    const dflt = await svc.targets("default");
    expect(dflt.map((t) => t.name).sort()).toEqual(["plain-sw", "root-sw"]);
    const plain = dflt.find((t) => t.name === "plain-sw")!;
    expect(plain).toEqual({
      node_id: ids.inPlain,
      name: "plain-sw",
      address: "2001:db8::20",
      snmp_port: 161,
      pool: "default",
      interval_secs: 5,
      snmp: null,
      templates: [],
      url_check: null,
      dns_check: null,
    });
    expect(await svc.targets("nobody-here")).toEqual([]);
  });

  it("follows a folder moved to another pool", async () => {
    const res = await k.http.put(`/api/v1/node-groups/${ids.plain}/pool`).set(bearer(k.adminToken)).send({ pool: "branch" });
    expect(res.status).toBe(200);
    const svc = get(AssignmentService);
    expect((await svc.targets("branch")).map((t) => t.node_id)).toEqual([ids.inPlain]);
    expect((await svc.targets("default")).map((t) => t.node_id)).toEqual([ids.root]);
  });

  it("resolves the node's SNMP credential and port where the directory publishes them (else no credential, port 161)", async () => {
    const cred = await post("/api/v1/credentials", { name: "ro v2c", kind: "snmp_v2c", community: "s3cret-community" });
    const node = await post("/api/v1/nodes", { name: "cred-sw", address: "10.20.0.9", credential_id: cred, snmp_port: 1161, pool: "credpool" });
    const published = await rawQuery<{ column_name: string }>(
      k.databaseUrl!,
      "SELECT column_name FROM information_schema.columns WHERE table_schema = 'inventory' AND table_name = 'node_directory'",
    );
    const has = new Set(published.map((c) => c.column_name));
    const web = await post("/api/v1/credentials", { name: "web basic", kind: "http", mode: "basic", username: "mon", password: "w3b-pass" });
    const put = (path: string, body: object) => k.http.put(`/api/v1/nodes/${node}/${path}`).set(bearer(k.adminToken)).send(body);
    expect((await put("url-check", { url: "http://127.0.0.1:8080/health", credential_id: web, body_match: { mode: "contains", pattern: "ok" } })).status).toBe(
      200,
    );
    expect((await put("dns-check", { name: "example.test", record_type: "AAAA", resolver_ip: "127.0.0.53", resolver_port: 5353 })).status).toBe(200);

    const [t] = await get(AssignmentService).targets("credpool");
    expect(t.node_id).toBe(node);
    expect(t.snmp).toEqual(has.has("credential_id") ? { version: "2c", community: "s3cret-community" } : null);
    expect(t.snmp_port).toBe(has.has("snmp_port") ? 1161 : 161);
    expect(t.url_check).toEqual(
      has.has("url_check")
        ? {
            url: "http://127.0.0.1:8080/health",
            method: "GET",
            timeout_ms: 5000,
            follow_redirects: true,
            verify_tls: true,
            expected_status: { kind: "two_xx" },
            body_match: { mode: "contains", pattern: "ok" },
            body_max_bytes: 65536,
            json_extract: [],
            auth: { mode: "basic", username: "mon", password: "w3b-pass" },
          }
        : null,
    );
    expect(t.dns_check).toEqual(
      has.has("dns_check")
        ? { name: "example.test", record_type: "AAAA", resolver_ip: "127.0.0.53", resolver_port: 5353, timeout_ms: 2000, max_depth: 5 }
        : null,
    );
  });
});

describe("assignment: templates and profile", () => {
  it("carries the collection template items of the node's profile", async () => {
    const profile = await post("/api/v1/profiles", { name: "ups", poll_interval_secs: 120 });
    const node = await post("/api/v1/nodes", { name: "ups-1", address: "10.20.1.1", profile_id: profile, pool: "tmpl" });
    const templates = get(CollectionTemplateService);
    const template = await templates.create({ name: "ups load" });
    await templates.createItem(template, { collection: "scalar", metric_kind: "gauge", metric_name: "ups_load_pct", oid: ".1.3.6.1.4.1.318.1.1.1.4.2.3.0" });
    await templates.attach(profile, template);
    const [t] = await get(AssignmentService).targets("tmpl");
    expect(t.node_id).toBe(node);
    expect(t.templates).toEqual([
      { id: expect.any(String), metric_name: "ups_load_pct", metric_kind: "gauge", oid: "1.3.6.1.4.1.318.1.1.1.4.2.3.0", collection: "scalar" },
    ]);
    const published = await rawQuery(
      k.databaseUrl!,
      "SELECT 1 FROM information_schema.columns WHERE table_schema = 'inventory' AND table_name = 'node_directory' AND column_name = 'poll_interval_secs'",
    );
    expect(t.interval_secs).toBe(published.length ? 120 : 5);
  });
});

describe("sample sink", () => {
  let nodeA: string;
  let nodeB: string;

  beforeAll(async () => {
    nodeA = await post("/api/v1/nodes", { name: "sink-a", address: "10.30.0.1" });
    nodeB = await post("/api/v1/nodes", { name: "sink-b", address: "10.30.0.2" });
  });

  it("stores latest values and day-partitioned history, records facts, then puts the samples on the bus", async () => {
    const now = Date.now();
    const events = collect("polling.sample");
    const reach = collect("polling.reachability");
    const batch = batchOf(
      [
        sample(nodeA, "reachable", 1, now),
        sample(nodeA, "if_in_bps", 8000, now, { ifindex: 2, if_name: "eth1" }),
        sample(nodeA, "cpu_load_pct", 12.5, now, { row: 196608, row_name: "cpu0" }),
        sample(nodeB, "reachable", 0, now),
      ],
      {
        facts: [{ node_id: nodeA, sys_descr: "Linux sink-a", sys_object_id: "1.3.6.1.4.1.8072.3.2.10", sys_name: "sink-a.example" }],
        interfaces: [
          {
            node_id: nodeA,
            ifindex: 2,
            if_name: "eth1",
            if_alias: "uplink",
            if_speed_bps: 1e9,
            oper_up: true,
            counter_bits: 64,
            counters: { in_octets: "123456789012", out_octets: "5", in_errors: "0", out_errors: "0", in_discards: null, out_discards: null },
            uptime_ticks: 4200,
            at_unix_ms: now,
          },
        ],
        reachability: [
          { node_id: nodeA, reachable: true, method: "icmp", at_unix_ms: now },
          { node_id: nodeB, reachable: false, method: "icmp", at_unix_ms: now },
        ],
      },
    );
    await get(SampleSink).accept(batch, source);
    events.off();
    reach.off();

    const latest = await rawQuery(
      k.databaseUrl!,
      `SELECT metric, ifindex, row_key, value, if_name, row_name, (extract(epoch FROM at) * 1000)::bigint AS at_ms
         FROM polling.latest WHERE node_id = $1 ORDER BY metric`,
      [nodeA],
    );
    expect(latest).toEqual([
      { metric: "cpu_load_pct", ifindex: -1, row_key: 196608, value: 12.5, if_name: null, row_name: "cpu0", at_ms: String(now) },
      { metric: "if_in_bps", ifindex: 2, row_key: -1, value: 8000, if_name: "eth1", row_name: null, at_ms: String(now) },
      { metric: "reachable", ifindex: -1, row_key: -1, value: 1, if_name: null, row_name: null, at_ms: String(now) },
    ]);
    // History lands in today's partition, named samples_YYYYMMDD.
    const part = partitionName(dayStart(now));
    const inPart = await rawQuery<{ n: string }>(k.databaseUrl!, `SELECT count(*) AS n FROM polling.${part} WHERE node_id = ANY($1)`, [[nodeA, nodeB]]);
    expect(Number(inPart[0].n)).toBe(4);

    const iface = await rawQuery(
      k.databaseUrl!,
      "SELECT if_name, if_alias, if_speed_bps, oper_up, counter_bits, last_counters FROM polling.interfaces WHERE node_id = $1",
      [nodeA],
    );
    expect(iface).toEqual([
      {
        if_name: "eth1",
        if_alias: "uplink",
        if_speed_bps: "1000000000",
        oper_up: true,
        counter_bits: 64,
        last_counters: { in_octets: "123456789012", out_octets: "5", in_errors: "0", out_errors: "0", in_discards: null, out_discards: null },
      },
    ]);
    const node = await k.http.get(`/api/v1/nodes/${nodeA}`).set(bearer(k.adminToken));
    expect(node.body).toMatchObject({ sys_name: "sink-a.example", sys_object_id: "1.3.6.1.4.1.8072.3.2.10", sys_descr: "Linux sink-a" });

    // One event per node of the poll, the samples stamped with the source and backfill false.
    const perNode = (events.got as { samples: Sample[] }[]).map((e) => e.samples);
    expect(perNode).toHaveLength(2);
    const forA = perNode.find((s) => s[0].node_id === nodeA)!;
    expect(forA.map((s) => s.metric).sort()).toEqual(["cpu_load_pct", "if_in_bps", "reachable"]);
    expect(forA.every((s) => s.pool === "default" && s.poller_id === "test-poller" && s.backfill === false)).toBe(true);
    expect(reach.got).toEqual([
      { node_id: nodeA, reachable: true, method: "icmp", at_unix_ms: now, poller_id: "test-poller", pool: "default" },
      { node_id: nodeB, reachable: false, method: "icmp", at_unix_ms: now, poller_id: "test-poller", pool: "default" },
    ]);
  });

  it("writes batches that arrive together in one transaction", async () => {
    const repo = get(SampleRepository);
    const spy = jest.spyOn(repo, "insertSamples");
    try {
      const at = Date.now();
      await Promise.all(Array.from({ length: 20 }, (_, i) => get(SampleSink).accept(batchOf([sample(nodeB, "rtt_ms", i, at + i)]), source)));
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0][0]).toHaveLength(20);
    } finally {
      spy.mockRestore();
    }
  });

  it("stores a batch sent twice once, and puts nothing on the bus the second time", async () => {
    const at = Date.now() - 1000;
    const make = () => batchOf([sample(nodeB, "sys_uptime_secs", 77, at), sample(nodeB, "sys_uptime_secs", 78, at + 1)]);
    await get(SampleSink).accept(make(), source);
    const events = collect("polling.sample");
    await get(SampleSink).accept(make(), source);
    events.off();
    const rows = await rawQuery<{ n: string }>(k.databaseUrl!, "SELECT count(*) AS n FROM polling.samples WHERE node_id = $1 AND metric = 'sys_uptime_secs'", [
      nodeB,
    ]);
    expect(Number(rows[0].n)).toBe(2);
    expect(events.got).toEqual([]);
  });

  it("stores backfill in history without overwriting a newer latest value; its bus events say backfill and carry no reachability", async () => {
    const now = Date.now();
    await get(SampleSink).accept(batchOf([sample(nodeA, "rtt_ms", 5, now)]), source);
    const events = collect("polling.sample");
    const reach = collect("polling.reachability");
    const old = { ...emptyBatch(true), samples: [sample(nodeA, "rtt_ms", 99, now - 60_000)] };
    old.reachability = [{ node_id: nodeA, reachable: true, method: "tcp", at_unix_ms: now - 60_000 }];
    await get(SampleSink).accept(old, source);
    events.off();
    reach.off();
    const latest = await rawQuery<{ value: number }>(k.databaseUrl!, "SELECT value FROM polling.latest WHERE node_id = $1 AND metric = 'rtt_ms'", [nodeA]);
    expect(latest).toEqual([{ value: 5 }]);
    const history = await rawQuery<{ value: number }>(
      k.databaseUrl!,
      "SELECT value FROM polling.samples WHERE node_id = $1 AND metric = 'rtt_ms' ORDER BY at",
      [nodeA],
    );
    expect(history.map((r) => r.value)).toEqual([99, 5]);
    expect(events.got).toEqual([{ samples: [expect.objectContaining({ value: 99, backfill: true })] }]);
    expect(reach.got).toEqual([]);
  });

  it("creates day partitions on demand and ahead, and drops whole days past retentionDays", async () => {
    const now = Date.now();
    const today = dayStart(now);
    // Three days back is inside the 5-day retention: its partition is made for it.
    await get(SampleSink).accept(batchOf([sample(nodeB, "rtt_ms", 3003, now - 3 * DAY)]), source);
    // A sample older than the retention is skipped (its partition would be dropped at once).
    await get(SampleSink).accept(batchOf([sample(nodeB, "rtt_ms", 9009, now - 9 * DAY)]), source);
    // An old partition as a previous run would have left it.
    const stale = today - 8 * DAY;
    await get(SampleRepository).createPartitions([stale]);
    const before = await get(SampleRepository).partitionDays();
    expect(before).toEqual(expect.arrayContaining([today - 3 * DAY, stale, today, today + DAY, today + 2 * DAY]));
    expect(before).not.toContain(today - 9 * DAY);

    const dropped = await get(SampleSink).maintainPartitions(now);
    expect(dropped).toEqual([stale]);
    const after = await get(SampleRepository).partitionDays();
    expect(after).toEqual(expect.arrayContaining([today - 3 * DAY, today, today + DAY, today + 2 * DAY]));
    expect(after).not.toContain(stale);
    const tables = await rawQuery<{ relname: string }>(k.databaseUrl!, "SELECT relname FROM pg_class WHERE relname = $1", [partitionName(stale)]);
    expect(tables).toEqual([]);
    const kept = await rawQuery<{ value: number }>(k.databaseUrl!, "SELECT value FROM polling.samples WHERE node_id = $1 AND metric = 'rtt_ms' ORDER BY at", [
      nodeB,
    ]);
    expect(kept.map((r) => r.value)).toContain(3003);
    expect(kept.map((r) => r.value)).not.toContain(9009);
  });

  it("forgets a deleted node's latest values, interfaces and interface-top ranks", async () => {
    const gone = await post("/api/v1/nodes", { name: "short-lived", address: "10.30.0.9" });
    const now = Date.now();
    await get(SampleSink).accept(
      batchOf([sample(gone, "reachable", 1, now), sample(gone, "if_in_bps", 5, now, { ifindex: 2 }), sample(gone, "if_out_bps", 7, now, { ifindex: 2 })]),
      source,
    );
    await rawQuery(k.databaseUrl!, "INSERT INTO polling.interfaces (node_id, ifindex, if_name) VALUES ($1, 2, 'eth2')", [gone]);
    const rows = async () =>
      (
        await rawQuery<{ n: number }>(
          k.databaseUrl!,
          `SELECT (SELECT count(*) FROM polling.latest WHERE node_id = $1) + (SELECT count(*) FROM polling.interfaces WHERE node_id = $1)
                + (SELECT count(*) FROM polling.latest_pairs WHERE node_id = $1 AND rank = 12) AS n`,
          [gone],
        )
      )[0].n;
    expect(Number(await rows())).toBe(5);
    expect((await k.http.delete(`/api/v1/nodes/${gone}`).set(bearer(k.adminToken))).status).toBe(204);
    await until("latest values, interfaces and ranks removed", async () => Number(await rows()) === 0);
  });
});

describe("poll loop", () => {
  let agent: SnmpsimAgent;
  let nodeIds: string[];

  beforeAll(async () => {
    agent = await startSnmpsim({
      devices: [
        {
          community: "loop-a",
          sysName: "loop-a",
          sysObjectId: "1.3.6.1.4.1.8072.3.2.10",
          interfaces: [
            { name: "eth0", inBytesPerSec: 1000, outBytesPerSec: 2000, speedMbps: 1000 },
            { name: "eth1", alias: "backup", inBytesPerSec: 500, outBytesPerSec: 0, speedMbps: 100, up: false },
          ],
          hc: true,
          hostResources: true,
        },
      ],
    });
    nodeIds = [await post("/api/v1/nodes", { name: "loop-a", address: "127.0.0.1", pool: "loop" })];
  });

  const target = (): PollTarget => ({
    node_id: nodeIds[0],
    name: "loop-a",
    address: agent.host,
    snmp_port: agent.port,
    pool: "loop",
    interval_secs: 2,
    snmp: { version: "2c", community: "loop-a" },
    templates: [],
    url_check: null,
    dns_check: null,
  });

  async function newLoop(): Promise<PollLoop> {
    const probes = await defaultProbes({ snmpTimeoutMs: 1500, snmpRetries: 1, log: ctx.log });
    return new PollLoop({
      pollerId: "loop-test",
      pool: "loop",
      concurrency: 4,
      probes,
      sink: { write: (b) => get(SampleSink).accept(b, { poller_id: "loop-test", pool: "loop" }) },
      log: ctx.log,
    });
  }

  const latest = (metric: string) =>
    rawQuery<{ ifindex: number; value: number }>(
      k.databaseUrl!,
      "SELECT ifindex, value FROM polling.latest WHERE node_id = $1 AND metric = $2 ORDER BY ifindex",
      [nodeIds[0], metric],
    );

  it("polls an SNMP agent on its interval: facts, interfaces, rates from the second cycle, reachability", async () => {
    const loop = await newLoop();
    const events = collect("polling.sample");
    loop.setTargets([target()]);
    loop.start();
    try {
      const inBps = await until("in_bps of two interfaces", async () => {
        const rows = await latest("if_in_bps");
        return rows.length === 2 ? rows : null;
      });
      // eth0 grows by 1000 B/s = 8000 bit/s, eth1 by 500 B/s.
      expect(inBps[0].value).toBeGreaterThan(6000);
      expect(inBps[0].value).toBeLessThan(10000);
      expect(inBps[1].value).toBeGreaterThan(3000);
      expect(inBps[1].value).toBeLessThan(5000);
    } finally {
      await loop.stop();
      events.off();
    }
    expect(await latest("if_oper_up")).toEqual([
      { ifindex: 1, value: 1 },
      { ifindex: 2, value: 0 },
    ]);
    expect((await latest("reachable")).map((r) => r.value)).toEqual([1]);
    const ifaces = await rawQuery(
      k.databaseUrl!,
      "SELECT ifindex, if_name, if_alias, if_speed_bps, counter_bits FROM polling.interfaces WHERE node_id = $1 ORDER BY ifindex",
      [nodeIds[0]],
    );
    expect(ifaces).toEqual([
      { ifindex: 1, if_name: "eth0", if_alias: expect.anything(), if_speed_bps: "1000000000", counter_bits: 64 },
      { ifindex: 2, if_name: "eth1", if_alias: "backup", if_speed_bps: "100000000", counter_bits: 64 },
    ]);
    const node = await k.http.get(`/api/v1/nodes/${nodeIds[0]}`).set(bearer(k.adminToken));
    expect(node.body.sys_name).toBe("loop-a");
    // Every sample went on the bus with the loop's pool and poller id.
    const all = (events.got as { samples: Sample[] }[]).flatMap((e) => e.samples);
    expect(all.length).toBeGreaterThan(10);
    expect(all.every((s) => s.poller_id === "loop-test" && s.pool === "loop" && !s.backfill)).toBe(true);
  });

  it("resumes rate computation from the state stored in polling.interfaces (a restarted poller has rates on its first poll)", async () => {
    const seeded = await get(SampleRepository).interfaceStates("loop");
    expect(seeded.map((s) => s.ifindex).sort()).toEqual([1, 2]);
    await rawQuery(k.databaseUrl!, "DELETE FROM polling.latest WHERE node_id = $1 AND metric = 'if_in_bps'", [nodeIds[0]]);
    const loop = await newLoop();
    loop.seedStates(seeded);
    const batch = await loop.pollOnce(target());
    const rates = batch.samples.filter((s) => s.metric === "if_in_bps");
    expect(rates).toHaveLength(2);
    expect(rates[0].value).toBeGreaterThan(6000);
  });

  it("runs as the embedded poller: registers as core (pool default), polls the default pool's nodes with the production probes", async () => {
    const node = await post("/api/v1/nodes", { name: "local-host", address: "127.0.0.1" });
    const poller = get(EmbeddedPoller);
    const events = collect("polling.sample");
    await poller.start();
    try {
      const rows = await until("a reachable sample of the node", async () => {
        const r = await rawQuery<{ value: number; n: string }>(
          k.databaseUrl!,
          "SELECT value, (SELECT count(*) FROM polling.samples s WHERE s.node_id = l.node_id AND s.metric = 'reachable') AS n FROM polling.latest l WHERE node_id = $1 AND metric = 'reachable'",
          [node],
        );
        return r.length ? r : null;
      });
      expect(rows[0].value).toBe(1);
      const pollers = await rawQuery(k.databaseUrl!, "SELECT id, pool, kind, online FROM polling.pollers WHERE id = 'core'");
      expect(pollers).toEqual([{ id: "core", pool: "default", kind: "embedded", online: true }]);
      // A node added over the API is picked up without waiting for the periodic refresh.
      const later = await post("/api/v1/nodes", { name: "local-host-2", address: "127.0.0.2" });
      await until(
        "the new node polled",
        async () => (await rawQuery(k.databaseUrl!, "SELECT 1 FROM polling.latest WHERE node_id = $1", [later])).length > 0,
        15000,
      );
      // With an SNMP credential (once the directory publishes credential and port), its interfaces are polled too.
      const published = await rawQuery(
        k.databaseUrl!,
        "SELECT 1 FROM information_schema.columns WHERE table_schema = 'inventory' AND table_name = 'node_directory' AND column_name IN ('credential_id', 'snmp_port')",
      );
      if (published.length === 2) {
        const cred = await post("/api/v1/credentials", { name: "loop-a v2c", kind: "snmp_v2c", community: "loop-a" });
        const snmpNode = await post("/api/v1/nodes", { name: "snmp-host", address: agent.host, snmp_port: agent.port, credential_id: cred });
        await until(
          "the SNMP node's interfaces",
          async () => (await rawQuery(k.databaseUrl!, "SELECT 1 FROM polling.interfaces WHERE node_id = $1", [snmpNode])).length === 2,
          15000,
        );
      }
    } finally {
      await poller.stop();
      events.off();
    }
    // Only the default pool: the "loop" pool's node is not the embedded poller's.
    const polled = new Set(
      (events.got as { samples: Sample[] }[])
        .flatMap((e) => e.samples)
        .filter((s) => s.poller_id === "core")
        .map((s) => s.node_id),
    );
    expect(polled.has(node)).toBe(true);
    expect(polled.has(nodeIds[0])).toBe(false);
  });
});
