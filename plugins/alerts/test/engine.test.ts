import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { classify, hitAtLevel, resolveBounds, type Bounds } from "../lib/bands.js";
import { formatBps, thresholdTitle } from "../lib/titles.js";
import { NodeStateService } from "../services/NodeStateService.js";
import {
  activeAlerts,
  clearSeen,
  createThreshold,
  events,
  history,
  insertFolder,
  insertNode,
  nodeState,
  publish,
  publishEach,
  sample,
  settle,
  startEngineKernel,
  waitForEvent,
  bearer,
  type EngineKernel,
} from "./engineSupport.js";

const none: Bounds = { warning_above: null, critical_above: null, warning_below: null, critical_below: null };

describe("bands (pure)", () => {
  it("above: at or above the bound, critical over warning", () => {
    const b = { ...none, warning_above: 80, critical_above: 90 };
    expect(classify(79.9, b)).toBeNull();
    expect(classify(80, b)).toEqual({ severity: "warning", direction: "above", threshold: 80 });
    expect(classify(90, b)).toEqual({ severity: "critical", direction: "above", threshold: 90 });
    expect(classify(1e9, b)?.severity).toBe("critical");
  });

  it("below: at or below the bound", () => {
    const b = { ...none, warning_below: 20, critical_below: 10 };
    expect(classify(20.1, b)).toBeNull();
    expect(classify(20, b)).toEqual({ severity: "warning", direction: "below", threshold: 20 });
    expect(classify(10, b)).toEqual({ severity: "critical", direction: "below", threshold: 10 });
    expect(classify(-5, b)?.severity).toBe("critical");
  });

  it("outside a band: both sides alert, inside is normal", () => {
    const b = { warning_above: 80, critical_above: 95, warning_below: 20, critical_below: 5 };
    expect(classify(50, b)).toBeNull();
    expect(classify(85, b)).toEqual({ severity: "warning", direction: "above", threshold: 80 });
    expect(classify(15, b)).toEqual({ severity: "warning", direction: "below", threshold: 20 });
    expect(classify(99, b)?.severity).toBe("critical");
    expect(classify(1, b)).toEqual({ severity: "critical", direction: "below", threshold: 5 });
    expect(classify(Number.NaN, b)).toBeNull();
  });

  it("resolves legacy direction/warning/critical, and the four bounds win", () => {
    expect(resolveBounds({ direction: "above", warning: 1, critical: 2 }, {})).toEqual({ ...none, warning_above: 1, critical_above: 2 });
    expect(resolveBounds({ direction: "below", warning: 1, critical: null }, {})).toEqual({ ...none, warning_below: 1 });
    expect(resolveBounds({ direction: "above", warning: 1, critical: 2 }, { critical_below: 0 })).toEqual({ ...none, critical_below: 0 });
  });

  it("names the bound of a committed level reached by a mixed streak", () => {
    const b = { ...none, warning_above: 80, critical_above: 90 };
    expect(hitAtLevel(1, 95, b)).toEqual({ severity: "warning", direction: "above", threshold: 80 });
    expect(hitAtLevel(2, 95, b)).toEqual({ severity: "critical", direction: "above", threshold: 90 });
  });
});

describe("titles (pure)", () => {
  it("writes English titles with units", () => {
    expect(formatBps(800e6)).toBe("800 Mbit/s");
    expect(formatBps(1.25e9)).toBe("1.25 Gbit/s");
    const base = { node_name: "sw1", ifindex: null, if_name: null, row: null, row_name: null, direction: "above" as const };
    expect(thresholdTitle({ ...base, metric: "if_in_bps", ifindex: 1, if_name: "Gi0/1", threshold: 800e6 })).toBe(
      "Interface Gi0/1 inbound traffic above 800 Mbit/s on sw1",
    );
    expect(thresholdTitle({ ...base, metric: "cpu_load_pct", row: 3, row_name: "cpu0", threshold: 90 })).toBe("CPU cpu0 load above 90% on sw1");
    expect(thresholdTitle({ ...base, metric: "storage_used_pct", row: 31, row_name: "/var", threshold: 95 })).toBe("Storage /var used above 95% on sw1");
    expect(thresholdTitle({ ...base, metric: "sys_uptime_secs", direction: "below", threshold: 300 })).toBe("Uptime below 300 s on sw1");
    expect(thresholdTitle({ ...base, metric: "my_gauge", threshold: 5 })).toBe("My_gauge above 5 on sw1");
    expect(thresholdTitle({ ...base, metric: "if_out_errors_ps", ifindex: 7, threshold: 2 })).toBe("Interface ifIndex 7 outbound errors above 2/s on sw1");
  });
});

describe("the engine", () => {
  let k: EngineKernel;
  let folder: string;
  let sub: string;

  beforeAll(async () => {
    k = await startEngineKernel({ flushMs: 100 });
    folder = await insertFolder(k.db, "site");
    sub = await insertFolder(k.db, "floor", folder);
  });
  afterAll(async () => {
    closeAllSockets();
    await k?.stop();
  });

  it("fires an interface alert with every field of the history row, then clears it", async () => {
    const node = await insertNode(k.db, "sw1", { group: sub });
    const rule = await createThreshold(k, {
      metric: "if_in_bps",
      scope_level: "interface",
      scope_ids: [`${node}:1`],
      direction: "above",
      warning: 800e6,
      critical: 950e6,
    });
    const at = Date.now() - 1000;
    await publish(k, sample(node, "if_in_bps", 850e6, { ifindex: 1, if_name: "Gi0/1", at_unix_ms: at, pool: "default" }));
    const fired = await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    const title = "Interface Gi0/1 inbound traffic above 800 Mbit/s on sw1";
    expect(fired).toEqual({
      id: expect.any(String),
      incident_key: `node:${node}:${rule}:if:1`,
      recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      at_unix_ms: at,
      check: rule,
      direction: "above",
      ifindex: 1,
      if_name: "Gi0/1",
      metric: "if_in_bps",
      node,
      observed_value: 850e6,
      threshold_value: 800e6,
      resolved: false,
      row: null,
      row_name: null,
      severity: "warning",
      state: "warning",
      subject_kind: "node",
      subject_name: null,
      title,
      folder_path: [folder, sub],
      symptom_of: null,
    });
    const rows = await history(k, "node_id = $1", [node]);
    expect(rows).toEqual([
      {
        id: fired.id,
        recorded_at: fired.recorded_at,
        at_unix_ms: String(at),
        incident_key: fired.incident_key,
        check_id: rule,
        direction: "above",
        ifindex: 1,
        if_name: "Gi0/1",
        metric: "if_in_bps",
        node_id: node,
        observed_value: 850e6,
        threshold_value: 800e6,
        resolved: false,
        row_key: null,
        row_name: null,
        severity: "warning",
        state: "warning",
        subject_kind: "node",
        subject_name: null,
        title,
      },
    ]);
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([
      expect.objectContaining({ incident_key: fired.incident_key, severity: "warning", state: "warning", if_name: "Gi0/1", title, check_id: rule }),
    ]);
    expect(await nodeState(k, node)).toBe("warning");
    expect(events(k, "alerts.node.state", node).at(-1)).toEqual({ node_id: node, state: "warning", folder_path: [folder, sub] });

    // back to normal, port renamed since: the clear row carries the port's current name
    await publish(k, sample(node, "if_in_bps", 100e6, { ifindex: 1, if_name: "GigabitEthernet0/1" }));
    const resolved = await waitForEvent(k, "alerts.resolved", (t) => t.node === node);
    expect(resolved).toMatchObject({
      incident_key: fired.incident_key,
      resolved: true,
      severity: "warning",
      state: "warning",
      observed_value: 100e6,
      threshold_value: 800e6,
      direction: "above",
      at_unix_ms: at,
      if_name: "GigabitEthernet0/1",
      title,
    });
    expect((await history(k, "node_id = $1", [node])).map((r) => r.resolved)).toEqual([false, true]);
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([]);
    expect(await nodeState(k, node)).toBe("ok");
  });

  it("fires below a bound and outside a band", async () => {
    const node = await insertNode(k.db, "band", { group: folder });
    await createThreshold(k, { metric: "sys_uptime_secs", scope_level: "node", scope_ids: [node], direction: "below", warning: 600, critical: 60 });
    await createThreshold(k, {
      metric: "rtt_ms",
      scope_level: "node",
      scope_ids: [node],
      direction: "above",
      warning_above: 100,
      warning_below: 1,
      critical_above: 500,
    });
    await publish(k, sample(node, "sys_uptime_secs", 30), sample(node, "rtt_ms", 50));
    await settle(k);
    expect((await history(k, "node_id = $1", [node])).map((r) => [r.metric, r.severity, r.direction, r.threshold_value, r.title])).toEqual([
      ["sys_uptime_secs", "critical", "below", 60, "Uptime below 60 s on band"],
    ]);
    await publish(k, sample(node, "rtt_ms", 0.5));
    await settle(k);
    await publish(k, sample(node, "rtt_ms", 150));
    await settle(k);
    await publish(k, sample(node, "rtt_ms", 600));
    await settle(k);
    const rtt = (await history(k, "node_id = $1 AND metric = 'rtt_ms'", [node])).map((r) => [r.severity, r.direction, r.threshold_value, r.resolved]);
    expect(rtt).toEqual([
      ["warning", "below", 1, false],
      // the same severity on the other side of the band moves the incident
      ["warning", "below", 1, true],
      ["warning", "above", 100, false],
      // escalation
      ["warning", "above", 100, true],
      ["critical", "above", 500, false],
    ]);
    expect(await nodeState(k, node)).toBe("critical");
  });

  it("escalates and de-escalates as a clear of the old severity and a fire of the new", async () => {
    const node = await insertNode(k.db, "esc", { group: folder });
    const rule = await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80, critical: 90 });
    clearSeen(k);
    for (const v of [85, 95, 85, 10]) {
      await publish(k, sample(node, "cpu_load_pct", v, { row: 768, row_name: "cpu0" }));
      await settle(k);
    }
    const rows = await history(k, "node_id = $1", [node]);
    expect(rows.map((r) => [r.severity, r.resolved, r.observed_value, r.threshold_value])).toEqual([
      ["warning", false, 85, 80],
      ["warning", true, 95, 80],
      ["critical", false, 95, 90],
      ["critical", true, 85, 90],
      ["warning", false, 85, 80],
      ["warning", true, 10, 80],
    ]);
    expect(new Set(rows.map((r) => r.incident_key))).toEqual(new Set([`node:${node}:${rule}:row:768`]));
    expect(rows.every((r) => r.row_key === 768 && r.row_name === "cpu0")).toBe(true);
    expect(rows[2].title).toBe("CPU cpu0 load above 90% on esc");
    expect(events(k, "alerts.fired", node).map((t) => t.severity)).toEqual(["warning", "critical", "warning"]);
    expect(events(k, "alerts.resolved", node).map((t) => t.severity)).toEqual(["warning", "critical", "warning"]);
    expect(events(k, "alerts.node.state", node).map((e) => e.state)).toEqual(["warning", "critical", "warning", "ok"]);
  });

  it("ignores backfilled samples (alerts are not backfilled) and samples of unknown nodes", async () => {
    const node = await insertNode(k.db, "late", { group: folder });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    clearSeen(k);
    await publish(k, sample(node, "cpu_load_pct", 99, { backfill: true }), sample(randomUUID(), "cpu_load_pct", 99));
    await settle(k);
    expect(await history(k, "node_id = $1", [node])).toEqual([]);
    expect(events(k, "alerts.fired")).toEqual([]);
    // a live sample still fires
    await publish(k, sample(node, "cpu_load_pct", 99));
    await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    // and a backfilled normal sample does not clear it
    await publish(k, sample(node, "cpu_load_pct", 1, { backfill: true }));
    await settle(k);
    expect(await activeAlerts(k, "node_id = $1", [node])).toHaveLength(1);
  });

  it("writes the transitions of one flush window in one batch sharing recorded_at", async () => {
    const a = await insertNode(k.db, "batch-a", { group: folder });
    const b = await insertNode(k.db, "batch-b", { group: folder });
    await createThreshold(k, { metric: "batch_metric", scope_level: "folder", scope_ids: [folder], direction: "above", warning: 10 });
    // normal samples first: rules and directory rows are cached, so the two crossings below land well within one window
    await publish(k, sample(a, "batch_metric", 1), sample(b, "batch_metric", 1));
    await settle(k);
    await publish(k, sample(a, "batch_metric", 20));
    await publish(k, sample(b, "batch_metric", 20));
    await settle(k);
    const rows = await history(k, "metric = 'batch_metric'");
    expect(rows).toHaveLength(2);
    expect(rows[0].recorded_at).toBe(rows[1].recorded_at);
    // ids are time-ordered: the keyset (recorded_at, id) keeps the order the engine decided them in
    expect(rows.map((r) => r.node_id)).toEqual([a, b]);
    // a later window gets its own recorded_at
    await publish(k, sample(a, "batch_metric", 1));
    await settle(k);
    const later = await history(k, "metric = 'batch_metric' AND resolved");
    expect(later).toHaveLength(1);
    expect(later[0].recorded_at > rows[0].recorded_at).toBe(true);
  });

  it("suppresses the notifications of a muted node + metric, still writing history", async () => {
    const node = await insertNode(k.db, "muted", { group: folder });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    await createThreshold(k, { metric: "storage_used_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    await rawQuery(
      k.db,
      "INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by) VALUES ($1, 'cpu_load_pct', 'work', now() + interval '1 hour', 'test')",
      [node],
    );
    // an expired mute of the other metric does not count
    await rawQuery(
      k.db,
      "INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by) VALUES ($1, 'storage_used_pct', 'old', now() - interval '1 second', 'test')",
      [node],
    );
    clearSeen(k);
    await publish(k, sample(node, "cpu_load_pct", 99), sample(node, "storage_used_pct", 99));
    const suppressed = await waitForEvent(k, "alerts.suppressed", (t) => t.node === node);
    expect(suppressed).toMatchObject({ reason: "mute", metric: "cpu_load_pct", resolved: false, severity: "warning" });
    expect(events(k, "alerts.fired", node).map((t) => t.metric)).toEqual(["storage_used_pct"]);
    expect((await history(k, "node_id = $1", [node])).map((r) => r.metric).sort()).toEqual(["cpu_load_pct", "storage_used_pct"]);
    expect(await activeAlerts(k, "node_id = $1", [node])).toHaveLength(2);
    // the clear is suppressed too
    await publish(k, sample(node, "cpu_load_pct", 1));
    await waitForEvent(k, "alerts.suppressed", (t) => t.node === node && t.resolved);
    expect(events(k, "alerts.resolved", node)).toEqual([]);
    expect((await history(k, "node_id = $1 AND resolved", [node])).map((r) => r.metric)).toEqual(["cpu_load_pct"]);
  });

  it("suppresses notifications of a node in maintenance (one-off window on its folder) and shows state maintenance", async () => {
    const maint = await insertFolder(k.db, "maint", folder);
    const node = await insertNode(k.db, "in-maint", { group: maint });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    await rawQuery(
      k.db,
      `INSERT INTO alerts.maintenance_windows (name, target_kind, target_ids, starts_at, ends_at, created_by)
       VALUES ('swap', 'folder', ARRAY[$1::uuid], now() - interval '1 minute', now() + interval '1 hour', 'test')`,
      [folder],
    );
    clearSeen(k);
    await publish(k, sample(node, "cpu_load_pct", 99));
    const suppressed = await waitForEvent(k, "alerts.suppressed", (t) => t.node === node);
    expect(suppressed).toMatchObject({ reason: "maintenance", resolved: false });
    expect(events(k, "alerts.fired", node)).toEqual([]);
    expect(await history(k, "node_id = $1", [node])).toHaveLength(1);
    expect(await nodeState(k, node)).toBe("maintenance");
    await rawQuery(k.db, "DELETE FROM alerts.maintenance_windows WHERE name = 'swap'");
  });

  it("suppresses in a recurring window open now in its time zone, and a refresh ends maintenance when it closes", async () => {
    const node = await insertNode(k.db, "weekly", { group: folder });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    // a daily window that opened 5 minutes ago, wall clock of Asia/Kolkata (UTC+05:30, no DST)
    const opened = new Date(Date.now() - 5 * 60_000 + 330 * 60_000);
    const start = `${String(opened.getUTCHours()).padStart(2, "0")}:${String(opened.getUTCMinutes()).padStart(2, "0")}`;
    await rawQuery(
      k.db,
      `INSERT INTO alerts.maintenance_windows (name, target_kind, target_ids, recurrence, created_by)
       VALUES ('nightly', 'node', ARRAY[$1::uuid], $2::jsonb, 'test')`,
      [node, JSON.stringify({ kind: "daily", start, duration_mins: 30, time_zone: "Asia/Kolkata" })],
    );
    clearSeen(k);
    await publish(k, sample(node, "cpu_load_pct", 99));
    expect(await waitForEvent(k, "alerts.suppressed", (t) => t.node === node)).toMatchObject({ reason: "maintenance" });
    expect(await nodeState(k, node)).toBe("maintenance");
    await rawQuery(k.db, "DELETE FROM alerts.maintenance_windows WHERE name = 'nightly'");
    clearSeen(k);
    await k.kernel.context("alerts")!.get(NodeStateService).refreshMaintenance();
    expect(events(k, "alerts.node.state", node)).toEqual([{ node_id: node, state: "warning", folder_path: [folder] }]);
    expect(await nodeState(k, node)).toBe("warning");
  });

  it("publishes active changes on alerts.active to sockets whose scope covers the node", async () => {
    const node = await insertNode(k.db, "watched", { group: sub });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    const inScope = await connectSocket(k.url, await k.token("viewer", { folders: [folder] }));
    const elsewhere = await connectSocket(k.url, await k.token("viewer", { folders: [randomUUID()] }));
    expect(await inScope.subscribe("alerts.active")).toEqual({ ok: true, channel: "alerts.active" });
    expect(await elsewhere.subscribe("alerts.active")).toEqual({ ok: true, channel: "alerts.active" });
    await publish(k, sample(node, "cpu_load_pct", 99));
    const got = (await inScope.waitFor("alerts.fired", (p) => (p as { node: string }).node === node)) as { title: string };
    expect(got.title).toBe("CPU load above 80% on watched");
    await inScope.waitFor("alerts.node.state", (p) => (p as { node_id: string }).node_id === node);
    await elsewhere.expectNone("alerts.fired", (p) => (p as { node: string }).node === node, 300);
  });

  it("clears the open incidents of a deleted threshold", async () => {
    const node = await insertNode(k.db, "deleted-rule", { group: folder });
    const rule = await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    await publish(k, sample(node, "cpu_load_pct", 99));
    await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    const res = await k.http.delete(`/api/v1/thresholds/${rule}`).set(bearer(k.adminToken));
    expect(res.status).toBe(204);
    const resolved = await waitForEvent(k, "alerts.resolved", (t) => t.node === node);
    expect(resolved).toMatchObject({ check: rule, resolved: true, observed_value: null });
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([]);
    expect(await nodeState(k, node)).toBe("ok");
  });

  it("clears a node's incidents and drops its state when inventory deletes it", async () => {
    const node = await insertNode(k.db, "gone", { group: folder });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    await publish(k, sample(node, "cpu_load_pct", 99));
    await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    await rawQuery(k.db, "DELETE FROM inventory.nodes WHERE id = $1", [node]);
    await k.ctx.bus.emit("inventory.node.deleted", { id: node, name: "gone", address: "10.0.0.9", group_id: folder, folder_path: [folder] });
    await waitForEvent(k, "alerts.resolved", (t) => t.node === node);
    await settle(k);
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([]);
    expect(await nodeState(k, node)).toBeNull();
  });

  it("continues after a restart from the open incidents: no second fire, and the clear still comes", async () => {
    const node = await insertNode(k.db, "restart", { group: folder });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80, dwell_samples: 2 });
    await publishEach(k, sample(node, "cpu_load_pct", 99), sample(node, "cpu_load_pct", 99));
    await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    await k.engine.stop();
    await k.engine.start();
    clearSeen(k);
    await publishEach(k, sample(node, "cpu_load_pct", 99), sample(node, "cpu_load_pct", 99), sample(node, "cpu_load_pct", 5));
    await settle(k);
    expect(events(k, "alerts.fired", node)).toEqual([]);
    await publish(k, sample(node, "cpu_load_pct", 5));
    await waitForEvent(k, "alerts.resolved", (t) => t.node === node);
    expect((await history(k, "node_id = $1", [node])).map((r) => r.resolved)).toEqual([false, true]);
  });

  it("flushes what is pending when stopped", async () => {
    const node = await insertNode(k.db, "stopping", { group: folder });
    await createThreshold(k, { metric: "cpu_load_pct", scope_level: "node", scope_ids: [node], direction: "above", warning: 80 });
    await publish(k, sample(node, "cpu_load_pct", 99));
    await k.engine.stop();
    expect(await history(k, "node_id = $1", [node])).toHaveLength(1);
    await k.engine.start();
  });
});
