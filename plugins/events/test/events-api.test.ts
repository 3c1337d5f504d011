/**
 * The events plugin end to end on a real kernel: syslog from real senders (logger) and raw datagrams,
 * attribution to inventory nodes, rules raising and clearing alerts through the alerts plugin, the
 * event list and stats, HTTP ingest sources, GET /listeners, and every permission and scope rule.
 */
import { spawnSync } from "node:child_process";
import pg from "pg";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";
import { NodeAddresses } from "../../inventory/index.js";

type Row = Record<string, unknown>;

let k: TestKernel;
let udpPort: number;
let tcpPort: number;
let trapPort: number;
let folderA: string;
let folderB: string;
let nodeA: string;
let nodeB: string;

function logger(args: string[], message: string): void {
  const r = spawnSync("logger", [...args, "-n", "127.0.0.1", message], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`logger failed: ${r.stderr}`);
}

async function flush(): Promise<void> {
  await k.context("events").get(EventPipeline).flush();
}

async function events(query = "", token?: string | null): Promise<Row[]> {
  const res = await k.request("GET", `/events${query}`, { token });
  expect(res.status).toBe(200);
  return res.body as Row[];
}

async function post(path: string, body: unknown, token?: string | null) {
  return k.request("POST", path, { body, token });
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: {
      pluginConfig: {
        events: { syslog: { udp: 0, tcp: 0, bindAddress: "127.0.0.1" }, traps: { udp: 0, bindAddress: "127.0.0.1" }, flushMs: 50 },
        alerts: { flushMs: 50 },
      },
    },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  udpPort = listeners.listeners.find((l) => l.name === "syslog.udp")!.port as number;
  tcpPort = listeners.listeners.find((l) => l.name === "syslog.tcp")!.port as number;
  trapPort = listeners.listeners.find((l) => l.name === "traps.udp")!.port as number;
  folderA = ((await post("/node-groups", { name: "site-a" })).body as Row).id as string;
  folderB = ((await post("/node-groups", { name: "site-b" })).body as Row).id as string;
  // 127.0.0.1 is node A (site A); 127.0.0.2 is node B (site B): the source address decides attribution.
  nodeA = ((await post("/nodes", { name: "router-a", address: "127.0.0.1", group_id: folderA })).body as Row).id as string;
  nodeB = ((await post("/nodes", { name: "switch-b", address: "127.0.0.2", group_id: folderB })).body as Row).id as string;
  // Attribution follows inventory changes a moment later (coalesced re-reads); take them now.
  await k.context("inventory").get(NodeAddresses).reload();
});
afterAll(async () => {
  if (process.env.SHOW_ERRORS) for (const l of k.logs) if (l.includes('"error"')) console.log(l.slice(0, 1500));
  await k?.stop();
});

describe("GET /listeners", () => {
  it("lists every bound listener with plugin, stream, protocol, address, port and counters; needs a token", async () => {
    const res = await k.request("GET", "/listeners");
    expect(res.status).toBe(200);
    const body = res.body as { listeners: Row[]; unbound: string[] };
    expect(body.listeners).toEqual(
      expect.arrayContaining([
        { plugin: "events", name: "syslog.udp", stream: "syslog", protocol: "udp", address: "127.0.0.1", port: udpPort, counters: expect.any(Object) },
        { plugin: "events", name: "syslog.tcp", stream: "syslog", protocol: "tcp", address: "127.0.0.1", port: tcpPort, counters: expect.any(Object) },
      ]),
    );
    expect(body.listeners).toEqual(expect.arrayContaining([expect.objectContaining({ name: "traps.udp", stream: "trap", protocol: "udp", port: trapPort })]));
    expect(body.unbound).toEqual(["events.syslog.tls"]);
    expect(k.printed.join("\n")).toMatch(new RegExp(`listening: .*syslog udp 127\\.0\\.0\\.1:${udpPort}`));
    expectError(await k.request("GET", "/listeners", { token: null }), 401, "unauthorized");
    expect((await k.request("GET", "/listeners", { token: await k.token("viewer") })).status).toBe(200);
  });
});

describe("receiving and attribution", () => {
  it("stores an RFC 5424 message from logger over UDP, attributed to the node at the sender's address", async () => {
    logger(["--udp", "-P", String(udpPort), "--rfc5424", "-t", "sshd", "-p", "auth.warning", "--msgid", "LOGIN"], "Failed password for root");
    await until("the event", async () => (await flush(), (await events("?q=Failed%20password")).length === 1));
    const [e] = await events("?q=Failed%20password");
    expect(e).toMatchObject({
      kind: "syslog",
      transport: "udp",
      listener: "syslog.udp",
      source_ip: "127.0.0.1",
      node_id: nodeA,
      severity: 4,
      facility: 4,
      app: "sshd",
      msgid: "LOGIN",
      message: "Failed password for root",
      malformed: false,
      action: "unmatched",
      rule_id: null,
    });
    expect(e.received_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("takes octet-counted RFC 5424 over TCP from logger, and a second sender is another node", async () => {
    logger(["--tcp", "--octet-count", "-P", String(tcpPort), "--rfc5424", "-t", "kernel"], "link eth0 down over tcp");
    await sendUdp(udpPort, "<13>Nov 24 10:00:00 switch-b app: from the second address", "127.0.0.2");
    await until("both events", async () => (await flush(), (await events("?q=over%20tcp")).length === 1 && (await events("?q=second%20address")).length === 1));
    expect((await events("?q=over%20tcp"))[0]).toMatchObject({ transport: "tcp", node_id: nodeA, message: "link eth0 down over tcp" });
    expect((await events("?q=second%20address"))[0]).toMatchObject({ transport: "udp", node_id: nodeB, source_ip: "127.0.0.2", host: "switch-b" });
  });

  it("stores junk as malformed raw text, counts it, and keeps listening", async () => {
    const before = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "syslog.udp")!.counters as Row;
    await sendUdp(udpPort, "<999>not a valid priority");
    await sendUdp(udpPort, Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0]));
    await sendUdp(udpPort, "<14>still alive after junk");
    await until("the good one", async () => (await flush(), (await events("?q=still%20alive")).length === 1));
    const after = ((await k.request("GET", "/listeners")).body as { listeners: Row[] }).listeners.find((l) => l.name === "syslog.udp")!.counters as Row;
    expect((after.received as number) - (before.received as number)).toBe(3);
    expect((after.malformed as number) - (before.malformed as number)).toBe(2);
    const bad = await events("?q=not%20a%20valid");
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatchObject({ malformed: true, raw: "<999>not a valid priority", data: null });
    // Without data the column holds SQL NULL (not a JSON null).
    const store = k.context("events").store;
    const [row] = (await store.query<{ none: boolean }>(`SELECT data IS NULL AS none FROM ${store.table("events")} WHERE id = $1`, [bad[0].id])).rows;
    expect(row).toEqual({ none: true });
  });
});

describe("traps", () => {
  it("stores a v2c trap from snmptrap attributed to its node; a trap_oid rule fires on it; the engine id is kept in the data dir", async () => {
    const res = await post("/event-rules", {
      name: "link down trap",
      pattern: "1.3.6.1.6.3.1.1.5.3",
      match_kind: "trap_oid",
      severity: "warning",
      node_id: nodeA,
    });
    expect(res.status).toBe(201);
    const ruleId = (res.body as Row).id as string;
    const r = spawnSync(
      "snmptrap",
      ["-v2c", "-c", "public", `127.0.0.1:${trapPort}`, "", "1.3.6.1.6.3.1.1.5.3", "1.3.6.1.2.1.2.2.1.1.2", "i", "2", "1.3.6.1.2.1.31.1.1.1.1.2", "s", "Gi0/2"],
      { encoding: "utf8", env: { ...process.env, MIBS: ":", MIBDIRS: "/nonexistent" } },
    );
    expect(r.status).toBe(0);
    await until("the trap", async () => (await flush(), (await events("?kind=trap")).length === 1));
    const [trap] = await events("?kind=trap");
    expect(trap).toMatchObject({
      kind: "trap",
      transport: "udp",
      listener: "traps.udp",
      node_id: nodeA,
      trap_oid: "1.3.6.1.6.3.1.1.5.3",
      action: "fired",
      rule_id: ruleId,
    });
    expect((trap.data as Row).varbinds).toEqual(expect.arrayContaining([expect.objectContaining({ oid: "1.3.6.1.2.1.31.1.1.1.1.2", value: "Gi0/2" })]));
    expect(JSON.stringify(trap)).not.toContain("public");
    await until("the alert", async () => ((await k.request("GET", "/alerts")).body as Row[]).some((a) => a.check === ruleId));
    const trapStats = (await k.request("GET", "/events/stats?group_by=trap")).body as Row[];
    expect(trapStats).toEqual([{ key: "1.3.6.1.6.3.1.1.5.3", node_id: null, count: 1 }]);
    expect(readFileSync(join(k.dataDir, "events-trap-engine-id"), "utf8").trim()).toMatch(/^80001f8805[0-9a-f]{16}$/);
    await k.request("DELETE", `/event-rules/${ruleId}`);
    await until("its alert cleared with the rule", async () => !((await k.request("GET", "/alerts")).body as Row[]).some((a) => a.check === ruleId));
  });
});

describe("event rules", () => {
  const rule = (over: Row = {}) => ({ name: "link down", pattern: "%LINK-3-UPDOWN", match_kind: "substring", severity: "critical", ...over });

  it("refuses what does not compile or is out of range with 400, and writes nothing", async () => {
    const bad: [Row, RegExp][] = [
      [rule({ match_kind: "regex", pattern: "([a-z" }), /pattern/],
      [rule({ match_kind: "regex", pattern: "(a+)+$" }), /pattern/],
      [rule({ match_kind: "trap_oid", pattern: "not.an.oid" }), /pattern/],
      [rule({ match_kind: "varbind", pattern: "1.3.6.1=" + "x".repeat(2000) }), /pattern/],
      [rule({ match_kind: "regex", clear_pattern: "(" }), /clear_pattern/],
      [rule({ min_count: 0 }), /min_count/],
      [rule({ window_secs: 86401 }), /window_secs/],
      [rule({ ttl_secs: 0 }), /ttl_secs/],
      [rule({ match_kind: "glob" }), /match_kind/],
      [rule({ severity: "major" }), /severity/],
      [rule({ source_kind: "flow" }), /source_kind/],
      [rule({ node_id: "not-a-uuid" }), /node_id/],
      [rule({ name: "   " }), /name/],
      [rule({ extra: 1 }), /extra/],
    ];
    const before = ((await k.request("GET", "/event-rules")).body as Row[]).length;
    for (const [body, field] of bad) {
      const res = await post("/event-rules", body);
      expect([res.status, body]).toEqual([400, body]);
      expect((res.body as { error: { code: string; message: string } }).error.message).toMatch(field);
    }
    expectError(await post("/event-rules", rule({ node_id: "00000000-0000-4000-8000-000000000000" })), 400, "unknown_reference");
    expectError(await post("/event-rules", rule({ source_id: "00000000-0000-4000-8000-000000000000" })), 400, "unknown_reference");
    expect(((await k.request("GET", "/event-rules")).body as Row[]).length).toBe(before);
  });

  it("needs ManageConfig and scope All to write; a viewer reads", async () => {
    expectError(await post("/event-rules", rule(), null), 401, "unauthorized");
    expectError(await post("/event-rules", rule(), "not-a-token"), 401, "unauthorized");
    expectError(await post("/event-rules", rule(), await k.token("viewer")), 403, "permission_denied");
    expectError(await post("/event-rules", rule(), await k.token("operator", { folders: [folderA] })), 403, "scope_unsupported");
    const created = await post("/event-rules", rule({ name: "by an operator" }), await k.token("operator"));
    expect(created.status).toBe(201);
    const id = (created.body as Row).id as string;
    const viewer = await k.token("viewer");
    expect((await k.request("GET", `/event-rules/${id}`, { token: viewer })).body).toMatchObject({
      id,
      min_count: 1,
      window_secs: 60,
      ttl_secs: null,
      enabled: true,
    });
    expectError(await k.request("DELETE", `/event-rules/${id}`, { token: viewer }), 403, "permission_denied");
    expect((await k.request("DELETE", `/event-rules/${id}`)).status).toBe(204);
    expectError(await k.request("GET", `/event-rules/${id}`), 404, "not_found");
  });

  it("fires after min_count matches within the window, suppresses repeats, and a clear pattern clears: history, active alerts and actions", async () => {
    const res = await post("/event-rules", rule({ min_count: 2, window_secs: 60, clear_pattern: "changed state to up", node_id: nodeA }));
    expect(res.status).toBe(201);
    const ruleId = (res.body as Row).id as string;
    const down = "<187>12: *Mar  1 18:46:11: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down";
    await sendUdp(udpPort, down);
    await until("counted", async () => (await flush(), (await events(`?action=counted&q=Gi0/1`)).length === 1));
    await sendUdp(udpPort, down);
    // kind=syslog: the trap test above stored a fired trap event too.
    await until("fired", async () => (await flush(), (await events(`?action=fired&kind=syslog`)).length === 1));
    const active = async () => ((await k.request("GET", "/alerts")).body as Row[]).filter((a) => a.check === ruleId);
    await until("the active alert", async () => (await active()).length === 1);
    expect((await active())[0]).toMatchObject({ node: nodeA, severity: "critical", metric: "event_rule" });
    await sendUdp(udpPort, down);
    await until("suppressed", async () => (await flush(), (await events(`?action=suppressed`)).length === 1));
    // The same messages from node B do not fire: the rule names node A.
    await sendUdp(udpPort, down, "127.0.0.2");
    await sendUdp(udpPort, down, "127.0.0.2");
    await sendUdp(udpPort, "<189>13: *Mar  1 18:47:00: %LINK-3-UPDOWN: Interface Gi0/1, changed state to up");
    await until("cleared", async () => (await flush(), (await events(`?action=cleared`)).length === 1));
    await until("the alert gone", async () => (await active()).length === 0);
    const history = ((await k.request("GET", `/alerts/history?node_id=${nodeA}`)).body as Row[]).filter((h) => h.check === ruleId);
    expect(history.map((h) => h.resolved)).toEqual([true, false]);
    expect(await events(`?matched=true&node_id=${nodeB}`)).toHaveLength(0);
    await k.request("DELETE", `/event-rules/${ruleId}`);
  });

  it("a TTL clears the alert after silence", async () => {
    const res = await post("/event-rules", rule({ name: "fan", pattern: "FAN_FAIL", ttl_secs: 1, severity: "warning" }));
    const ruleId = (res.body as Row).id as string;
    await sendUdp(udpPort, "<12>Nov 24 10:00:00 router-a envmon: FAN_FAIL tray 2");
    const active = async () => ((await k.request("GET", "/alerts")).body as Row[]).filter((a) => a.check === ruleId);
    await until("fired", async () => (await active()).length === 1);
    await until("cleared by the TTL", async () => (await active()).length === 0, 10000);
    const history = ((await k.request("GET", `/alerts/history?node_id=${nodeA}`)).body as Row[]).filter((h) => h.check === ruleId);
    expect(history.map((h) => h.resolved)).toEqual([true, false]);
    await k.request("DELETE", `/event-rules/${ruleId}`);
  });
});

describe("GET /events/stats", () => {
  it("counts by kind, action and source in count order, and by time in buckets", async () => {
    await flush();
    const byKind = (await k.request("GET", "/events/stats?group_by=kind")).body as Row[];
    const total = (await events("?limit=1000")).length;
    const syslogTotal = (await events("?kind=syslog&limit=1000")).length;
    expect(byKind).toEqual([
      { key: "syslog", node_id: null, count: syslogTotal },
      { key: "trap", node_id: null, count: total - syslogTotal },
    ]);
    const byAction = (await k.request("GET", "/events/stats?group_by=action")).body as Row[];
    expect(byAction.map((b) => b.count)).toEqual([...byAction.map((b) => b.count as number)].sort((a, b) => b - a));
    expect(byAction.reduce((n, b) => n + (b.count as number), 0)).toBe(total);
    const bySource = (await k.request("GET", "/events/stats?group_by=source&kind=syslog")).body as Row[];
    expect(bySource.find((b) => b.key === "router-a")).toMatchObject({ node_id: nodeA });
    expect(bySource.find((b) => b.key === "switch-b")).toMatchObject({ node_id: nodeB });
    const byTime = (await k.request("GET", "/events/stats?group_by=time&bucket_secs=3600&split=kind")).body as Row[];
    expect(byTime.reduce((n, b) => n + (b.count as number), 0)).toBe(total);
    for (const b of byTime) {
      expect(b).toEqual({ ts_unix_ms: expect.any(Number), count: expect.any(Number), by_kind: expect.any(Object) });
      expect(Object.values(b.by_kind as Record<string, number>).reduce((n, c) => n + c, 0)).toBe(b.count);
    }
    const plain = (await k.request("GET", "/events/stats?group_by=time&bucket_secs=3600")).body as Row[];
    expect(plain[0].by_kind).toBeNull();
  });

  it("filters: src by name and address, src_not, msg regex and msg_not, severity, matched", async () => {
    const count = async (q: string) =>
      ((await k.request("GET", `/events/stats?group_by=kind&${q}`)).body as Row[]).reduce((n, b) => n + (b.count as number), 0);
    const all = await count("");
    const b = await count("src=switch");
    expect(b).toBeGreaterThan(0);
    expect(await count("src=127.0.0.2")).toBe(b);
    expect(await count("src=127.0.0.2/32")).toBe(b);
    expect(await count("src=switch&src_not=true")).toBe(all - b);
    const m = await count("msg=changed%20state%20to%20(down|up)&msg_regex=true");
    expect(m).toBeGreaterThan(0);
    expect(await count("msg=changed%20state%20to%20(down|up)&msg_regex=true&msg_not=true")).toBe(all - m);
    const listed = await events("?limit=1000");
    expect(listed).toHaveLength(all);
    const withSeverity = (...sev: number[]) => listed.filter((e) => sev.includes(e.severity as number)).length;
    expect(withSeverity(5)).toBeGreaterThan(0);
    for (let sev = 0; sev <= 7; sev++) expect([sev, await count(`severity=${sev}`)]).toEqual([sev, withSeverity(sev)]);
    expect(await count("severity=3,5")).toBe(withSeverity(3, 5));
    expect(await count("severity=0,1,2,3,4,5,6,7")).toBe(withSeverity(0, 1, 2, 3, 4, 5, 6, 7));
    expect(withSeverity(0, 1, 2, 3, 4, 5, 6, 7)).toBeLessThan(all);
    expect((await count("matched=true")) + (await count("matched=false"))).toBe(all);
  });

  it("answers 400 for a malformed bound, an unknown kind, a regex that does not compile, a group_by outside the list", async () => {
    for (const q of [
      "start=yesterday",
      "end=2026-13-45T00:00:00Z",
      "start=2026-11-24T10:00:00Z&end=2026-11-23T10:00:00Z",
      "kind=syslog,flowz",
      "group_by=host",
      "action=exploded",
      "severity=8",
      "matched=maybe",
      "node_id=nope",
      "split=action",
      "group_by=time&bucket_secs=0",
      "group_by=time&start=2020-01-01T00:00:00Z&bucket_secs=1",
      "limit=0",
      "start=2026-02-30T00:00:00Z",
      "end=2026-11-24T10:00Z",
      "start=999999999999999",
      "start=253402300800000",
      "end=%2B010000-01-01T00:00:00Z",
      "start=0000-01-01T00:00:00Z",
    ]) {
      const res = await k.request("GET", `/events/stats?${q}`);
      expect([q, res.status]).toEqual([q, 400]);
      expectError(res, 400, "validation_failed");
    }
    expectError(await k.request("GET", "/events/stats?q=(unclosed&regex=true"), 400, "invalid_regex");
    expectError(await k.request("GET", "/events/stats?msg=[z-a]&msg_regex=true"), 400, "invalid_regex");
    expectError(await k.request("GET", "/events?kind=nope"), 400, "validation_failed");
    for (const q of ["start=2026-02-30T00:00:00Z", "start=999999999999999", "end=253402300800000"])
      expectError(await k.request("GET", `/events?${q}`), 400, "validation_failed");
    // The last instant of year 9999 is a bound like any other.
    expect((await k.request("GET", "/events/stats?end=253402300799999")).status).toBe(200);
  });

  it("answers invalid_cursor, not a 500, for a cursor whose timestamp PostgreSQL could not cast", async () => {
    const id = "0b4c1d8e-7f60-4a3b-9c2d-1e2f3a4b5c6d";
    const cursor = (at: string) => Buffer.from(JSON.stringify([at, id])).toString("base64url");
    for (const at of ["+010000-01-01T00:00:00Z", "1", "2026-02-30T00:00:00Z", "2026-11-24T10:00:00+24:00"]) {
      for (const path of ["/events", "/event-rules", "/event-sources"]) {
        const res = await k.request("GET", `${path}?cursor=${cursor(at)}`);
        expect([path, at, res.status]).toEqual([path, at, 400]);
        expectError(res, 400, "invalid_cursor");
      }
    }
    expect((await k.request("GET", `/events?cursor=${cursor("2026-11-24T10:00:00.123456Z")}`)).status).toBe(200);
  });
});

describe("the event list", () => {
  it("a page is one statement (no BEGIN, SET LOCAL around it); a read the server cancels answers 503 query_timeout", async () => {
    // A lock holds the page's statement in the server; its backend shows it, then a cancel ends it with 57014, the
    // SQLSTATE the 20-s statement_timeout raises (test/kernel/pool.test.ts checks the limit on the read pool's connections).
    const holder = new pg.Client({ connectionString: k.databaseUrl! });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE events.events IN ACCESS EXCLUSIVE MODE");
      const pending = k.request("GET", "/events?limit=5");
      const waiting = await until(
        "the page waiting on the lock",
        async () =>
          (
            await rawQuery<{ pid: number; query: string; one_statement: boolean }>(
              k.databaseUrl!,
              `SELECT pid, query, xact_start = query_start AS one_statement FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%events%'`,
            )
          )[0] ?? null,
        10_000,
      );
      // The transaction began with this statement: nothing ran before it on that connection's transaction.
      expect(waiting.one_statement).toBe(true);
      expect(waiting.query).toMatch(/^SELECT e\.id/);
      await rawQuery(k.databaseUrl!, "SELECT pg_cancel_backend($1)", [waiting.pid]);
      expectError(await pending, 503, "query_timeout");
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    expect((await k.request("GET", "/events?limit=5")).status).toBe(200);
  });

  it("walks newest first with a keyset cursor and loses no row", async () => {
    for (let i = 0; i < 25; i++) await sendUdp(udpPort, `<14>page walk ${i}`);
    await until("25 rows", async () => (await flush(), (await events("?q=page%20walk&limit=1000")).length === 25));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await k.request("GET", `/events?q=page%20walk&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...(res.body as Row[]).map((r) => r.message as string));
      cursor = res.headers.get("x-next-cursor");
    } while (cursor);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expectError(await k.request("GET", "/events?cursor=garbage"), 400, "invalid_cursor");
  });

  it("start is inclusive and end exclusive, to the microsecond or in Unix milliseconds; stats default to the last 24 hours", async () => {
    await sendUdp(udpPort, "<14>bounds probe");
    const [e] = await until("stored", async () => {
      await flush();
      const rows = await events("?q=bounds%20probe");
      return rows.length ? rows : null;
    });
    const at = e.received_at as string;
    const ms = Date.parse(at);
    const seen = async (q: string) => (await events(`?q=bounds%20probe&${q}`)).length;
    expect(await seen(`start=${encodeURIComponent(at)}`)).toBe(1);
    expect(await seen(`end=${encodeURIComponent(at)}`)).toBe(0);
    expect(await seen(`start=${encodeURIComponent(at)}&end=${encodeURIComponent(new Date(ms + 1).toISOString())}`)).toBe(1);
    expect(await seen(`start=${ms}`)).toBe(1);
    expect(await seen(`start=${ms + 1}`)).toBe(0);
    expect(await seen(`end=${ms}`)).toBe(0);
    // An event from 23 hours ago (a poller's clock within a day of the core's): in the stats' default range, not past a later start.
    const old = Date.now() - 23 * 3_600_000;
    await post("/events/forwarded", {
      poller_id: "p1",
      events: [{ kind: "syslog", transport: "udp", source_ip: "127.0.0.1", received_at_ms: old, raw: "bounds old" }],
    });
    await flush();
    const stat = async (q: string) =>
      ((await k.request("GET", `/events/stats?q=bounds%20old&${q}`)).body as Row[]).reduce((n, b) => n + (b.count as number), 0);
    expect(await stat("")).toBe(1);
    expect(await stat(`start=${old + 1}`)).toBe(0);
    expect(await stat(`start=${old}&end=${old + 1}`)).toBe(1);
  });

  it("folder scope: a scoped viewer sees the events of its folders' nodes only; an unattributed event only scope All", async () => {
    await sendUdp(udpPort, "<14>from nowhere", "127.0.0.9");
    await until("stored", async () => (await flush(), (await events("?q=from%20nowhere")).length === 1));
    const scopedB = await k.token("viewer", { folders: [folderB] });
    const seen = await events("?limit=1000", scopedB);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e) => e.node_id === nodeB)).toBe(true);
    const stats = (await k.request("GET", "/events/stats?group_by=source", { token: scopedB })).body as Row[];
    expect(stats.map((s) => s.key)).toEqual(["switch-b"]);
    expect(await events("?q=from%20nowhere", scopedB)).toHaveLength(0);
    expect(await events(`?node_id=${nodeA}`, scopedB)).toHaveLength(0);
    expectError(await k.request("GET", "/events", { token: null }), 401, "unauthorized");
  });
});

describe("event sources and HTTP ingest", () => {
  it("lists the built-in sources; refuses deleting them", async () => {
    const list = (await k.request("GET", "/event-sources")).body as Row[];
    const builtin = list.filter((s) => s.builtin);
    expect(builtin.map((s) => s.kind).sort()).toEqual(["syslog", "trap"]);
    expectError(await k.request("DELETE", `/event-sources/${builtin[0].id as string}`), 409, "source_builtin");
  });

  it("an http source answers its token once; posts with it are stored under its node; a bad token is 401", async () => {
    const created = await post("/event-sources", { kind: "http", name: "deploy script", node_id: nodeB });
    expect(created.status).toBe(201);
    const { id, token } = created.body as { id: string; token: string };
    expect(token).toMatch(/^nmsev_/);
    const view = (await k.request("GET", `/event-sources/${id}`)).body as Row;
    expect(view).toMatchObject({ kind: "http", has_token: true, node_id: nodeB });
    expect(JSON.stringify(view)).not.toContain(token);
    const ingest = (body: unknown, t: string | null) =>
      k.request("POST", "/events/ingest", { token: null, body, headers: t === null ? {} : { Authorization: `Bearer ${t}` } });
    const res = await ingest({ events: [{ message: "deploy started", severity: 5, app: "ci", data: { build: 42 } }] }, token);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 1, dropped: 0 });
    await until("stored", async () => (await flush(), (await events("?q=deploy%20started")).length === 1));
    expect((await events("?q=deploy%20started"))[0]).toMatchObject({
      transport: "http",
      node_id: nodeB,
      source_id: id,
      app: "ci",
      data: { fields: { build: 42 } },
    });
    expectError(await ingest({ events: [{ message: "x" }] }, null), 401, "unauthorized");
    expectError(await ingest({ events: [{ message: "x" }] }, "nmsev_wrong"), 401, "unauthorized");
    expectError(await ingest({ events: [{ message: "x" }] }, k.adminToken), 401, "unauthorized");
    expectError(await ingest({ events: [{ message: "nul \u0000 inside" }] }, token), 400, "invalid_characters");
    expectError(await ingest({ events: [{ message: "half \ud800 a pair" }] }, token), 400, "invalid_characters");
    expectError(await ingest({ events: [{ message: "ok", data: { deep: ["a\u0000b"] } }] }, token), 400, "invalid_characters");
    expectError(await ingest({ events: [{}] }, token), 400, "validation_failed");
    expectError(await ingest({ events: [{ message: "x", source_ip: "not-an-address" }] }, token), 400, "validation_failed");
    // A new token replaces the old one; a disabled source refuses posts.
    const rotated = (await post(`/event-sources/${id}/token`, {})).body as { token: string };
    expectError(await ingest({ events: [{ message: "x" }] }, token), 401, "unauthorized");
    expect((await ingest({ events: [{ message: "with the new token" }] }, rotated.token)).status).toBe(202);
    expect((await k.request("PATCH", `/event-sources/${id}`, { body: { enabled: false } })).status).toBe(200);
    expectError(await ingest({ events: [{ message: "x" }] }, rotated.token), 401, "unauthorized");
  });

  it("a disabled per-node syslog source drops what that node sends", async () => {
    const created = await post("/event-sources", { kind: "syslog", name: "switch-b syslog", node_id: nodeB, enabled: false });
    expect(created.status).toBe(201);
    expectError(await post("/event-sources", { kind: "syslog", name: "again", node_id: nodeB }), 409, "source_exists");
    expectError(await post("/event-sources", { kind: "syslog", name: "no node" }), 400, "validation_failed");
    await sendUdp(udpPort, "<14>dropped by the disabled source", "127.0.0.2");
    await sendUdp(udpPort, "<14>kept from node a");
    await until("the other one", async () => (await flush(), (await events("?q=kept%20from%20node")).length === 1));
    expect(await events("?q=dropped%20by")).toHaveLength(0);
    expect((await k.request("DELETE", `/event-sources/${(created.body as Row).id as string}`)).status).toBe(204);
  });

  it("contributes event_rules and event_sources to the configuration bundle, without ingest tokens", async () => {
    const ctx = k.context("events");
    const table = async (name: string) => {
      const rows: unknown[] = [];
      for await (const r of await eventsPlugin.bundle!.tables.find((t) => t.name === name)!.export(ctx)) rows.push(r);
      return rows;
    };
    const sources = (await table("event_sources")) as Row[];
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const s of sources) expect(Object.keys(s).sort()).toEqual(["enabled", "id", "kind", "name", "node_id"]);
    await post("/event-rules", { name: "bundled", pattern: "x", match_kind: "substring", severity: "info" });
    const rules = (await table("event_rules")) as Row[];
    expect(rules.find((r) => r.name === "bundled")).toEqual({
      id: expect.any(String),
      name: "bundled",
      pattern: "x",
      match_kind: "substring",
      severity: "info",
      clear_pattern: null,
      enabled: true,
      min_count: 1,
      window_secs: 60,
      ttl_secs: null,
      node_id: null,
      source_id: null,
      source_kind: null,
    });
  });

  it("needs ManageSystem to create sources", async () => {
    expectError(await post("/event-sources", { kind: "http", name: "x" }, await k.token("operator")), 403, "permission_denied");
    expectError(await post("/event-sources", { kind: "http", name: "x" }, await k.token("admin", { folders: [folderA] })), 403, "scope_unsupported");
  });
});

describe("POST /events/forwarded (remote pollers)", () => {
  const record = (over: Row = {}) => ({
    kind: "syslog",
    transport: "udp",
    listener: "syslog.udp",
    source_ip: "127.0.0.2",
    received_at_ms: Date.now(),
    syslog: {
      format: "rfc3164",
      facility: 1,
      severity: 5,
      timestamp: null,
      hostname: "switch-b",
      app_name: "x",
      procid: null,
      msgid: null,
      structured_data: [],
      message: "relayed by a poller",
      cisco: null,
    },
    trap: null,
    raw: null,
    malformed: false,
    ...over,
  });

  it("needs ManageSystem and scope All", async () => {
    const body = { poller_id: "p1", events: [record()] };
    expectError(await post("/events/forwarded", body, null), 401, "unauthorized");
    expectError(await post("/events/forwarded", body, await k.token("operator")), 403, "permission_denied");
    expectError(await post("/events/forwarded", body, await k.token("admin", { folders: [folderA] })), 403, "scope_unsupported");
    expectError(await post("/events/forwarded", { events: [record()] }), 400, "validation_failed");
    // A protocol route keeps its text as sent, but not a body nested past the kernel's depth cap.
    const deep = await fetch(`${k.url}/api/v1/events/forwarded`, {
      method: "POST",
      headers: { Authorization: `Bearer ${k.adminToken}`, "Content-Type": "application/json" },
      body: `{"poller_id":"p1","events":${"[".repeat(5000)}${"]".repeat(5000)}}`,
    });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: { code: string } }).error.code).toBe("nesting_too_deep");
  });

  it("takes good records under the poller's name and drops what is not a record, cleaning text the store cannot hold", async () => {
    const res = await post("/events/forwarded", {
      poller_id: "p1",
      events: [
        record({ syslog: { ...record().syslog, message: "relayed \u0000 by a poller" } }),
        record({ source_ip: "not-an-ip" }),
        record({ kind: "flow" }),
        record({
          kind: "trap",
          syslog: null,
          trap: { version: "v2c", pdu: "trap", trap_oid: "1.3.6.1.6.3.1.1.5.4", varbinds: [], uptime: 5, community: "secret" },
        }),
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 2, dropped: 2 });
    await until("stored", async () => (await flush(), (await events("?q=relayed")).length === 1));
    expect((await events("?q=relayed"))[0]).toMatchObject({ listener: "poller:p1/syslog.udp", node_id: nodeB, message: "relayed \\x00 by a poller" });
    const trap = (await events("?kind=trap&limit=1000")).find((e) => e.trap_oid === "1.3.6.1.6.3.1.1.5.4")!;
    expect(trap).toMatchObject({ listener: "poller:p1/syslog.udp", node_id: nodeB });
    expect(JSON.stringify(trap)).not.toContain("secret");
  });

  it("attributes a forwarded record to a node of the poller's pool first: two sites may reuse one address", async () => {
    // Three nodes at 127.0.0.50: "a-shared" (pool far, first by name), "b-shared" (pool edge), "c-shared" (pool default).
    const ids: Record<string, string> = {};
    for (const [name, pool] of [
      ["a-shared", "far"],
      ["b-shared", "edge"],
      ["c-shared", "default"],
    ]) {
      const res = await post("/nodes", { name, address: "127.0.0.50", pool });
      expect(res.status).toBe(201);
      ids[pool] = (res.body as Row).id as string;
    }
    await k.context("inventory").get(NodeAddresses).reload();
    const msg = (text: string) => record({ source_ip: "127.0.0.50", syslog: { ...record().syslog, message: text } });
    expect((await post("/events/forwarded", { poller_id: "p-edge", pool: "edge", events: [msg("shared from edge")] })).status).toBe(202);
    expect((await post("/events/forwarded", { poller_id: "p-far", pool: "far", events: [msg("shared from far")] })).status).toBe(202);
    expect((await post("/events/forwarded", { poller_id: "p-none", pool: "nowhere", events: [msg("shared from nowhere")] })).status).toBe(202);
    expect((await post("/events/forwarded", { poller_id: "p-old", events: [msg("shared from an older poller")] })).status).toBe(202);
    expectError(await post("/events/forwarded", { poller_id: "p-bad", pool: "no spaces", events: [] }), 400, "validation_failed");
    // The core's own listener serves the embedded poller's pool (default).
    await sendUdp(udpPort, "<14>shared to the core", "127.0.0.50");
    const stored = await until("five shared events", async () => {
      await flush();
      const rows = await events("?q=shared&limit=100");
      return rows.length === 5 ? rows : null;
    });
    const nodeOf = (text: string) => stored.find((e) => e.message === text)?.node_id;
    expect(nodeOf("shared from edge")).toBe(ids.edge);
    expect(nodeOf("shared from far")).toBe(ids.far);
    // No node in the pool named (or no pool named): the first by name.
    expect(nodeOf("shared from nowhere")).toBe(ids.far);
    expect(nodeOf("shared from an older poller")).toBe(ids.far);
    expect(nodeOf("shared to the core")).toBe(ids.default);
    for (const id of Object.values(ids)) await k.request("DELETE", `/nodes/${id}`);
  });

  it("answers a record with malformed nested parts without a 500: bad varbinds drop the trap, bad syslog parts are left out", async () => {
    const trapRecord = (varbinds: unknown, raw: string | null = null) =>
      record({ kind: "trap", syslog: null, raw, trap: { version: "v2c", pdu: "trap", trap_oid: "1.3.6.1.4.1.99.0.7", varbinds } });
    const res = await post("/events/forwarded", {
      poller_id: "p1",
      events: [
        record({ syslog: { ...record().syslog, message: "nested first" } }),
        trapRecord([null]),
        trapRecord([{ type: "Integer", value: 1 }]),
        trapRecord([{ oid: "1.3.6.1.2.1.1.3.0", type: "Integer", value: { no: "objects" } }]),
        trapRecord("not a list"),
        trapRecord([null], "0xdeadbeef"),
        record({
          syslog: {
            ...record().syslog,
            message: "nested parts",
            structured_data: [null, 5, { id: "a@1", params: [["k", "v"], ["only-one"], null] }, { id: 7 }],
            cisco: { facility: "LINK", severity: 42, mnemonic: "UPDOWN" },
          },
        }),
        record({ syslog: { ...record().syslog, message: "nested last", cisco: "text" } }),
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 4, dropped: 4 });
    await until("stored", async () => (await flush(), (await events("?q=nested")).length === 3));
    const parts = (await events("?q=nested%20parts"))[0];
    expect(parts.data).toMatchObject({ structured_data: [{ id: "a@1", params: [["k", "v"]] }] });
    expect((parts.data as Row).cisco ?? null).toBeNull();
    const raw = (await events("?kind=trap&limit=1000")).filter((e) => e.raw === "0xdeadbeef");
    expect(raw).toHaveLength(1);
    expect(raw[0]).toMatchObject({ malformed: true, trap_oid: null });
  });
});

describe("retention", () => {
  it("keeps daily partitions ahead and drops whole days past retentionDays", async () => {
    const pipeline = k.context("events").get(EventPipeline);
    const day = 86_400_000;
    const old = Date.now() - 40 * day;
    await expect(pipeline.maintainPartitions()).resolves.toEqual([]);
    const partitions = async () =>
      (
        await k
          .context("events")
          .store.query<{ relname: string }>(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'events'",
          )
      ).rows.map((r) => r.relname);
    const oldName = `events_${new Date(old).toISOString().slice(0, 10).replace(/-/g, "")}`;
    await post("/events/forwarded", {
      poller_id: "p1",
      events: [{ kind: "syslog", transport: "udp", source_ip: "127.0.0.1", received_at_ms: old, raw: "forty days old" }],
    });
    await flush();
    // A forwarded record more than a day off the core's clock takes the core's time: no old partition appears.
    expect(await partitions()).not.toContain(oldName);
    const today = `events_${new Date().toISOString().slice(0, 10).replace(/-/g, "")}`;
    expect(await partitions()).toContain(today);
    const dropped = await pipeline.maintainPartitions(Date.now() + 20 * day);
    expect(dropped.map((d) => new Date(d).toISOString().slice(0, 10))).toContain(new Date().toISOString().slice(0, 10));
    expect(await partitions()).not.toContain(today);
  });
});
