import { rawQuery } from "../../../test/support/db.js";
import type { PollerEvent, ReachabilityEvent } from "../../polling/index.js";
import { LIVENESS_CHECK_ID, POOL_CHECK_ID } from "../lib/checks.js";
import {
  activeAlerts,
  clearSeen,
  events,
  history,
  insertFolder,
  insertNode,
  nodeState,
  settle,
  startEngineKernel,
  waitForEvent,
  type EngineKernel,
} from "./engineSupport.js";

let k: EngineKernel;
let folder: string;

beforeAll(async () => {
  k = await startEngineKernel();
  folder = await insertFolder(k.db, "dc");
});
afterAll(async () => {
  await k?.stop();
});

const reach = (node_id: string, reachable: boolean, at = Date.now()): Promise<void> =>
  k.ctx.bus.emit("polling.reachability", { node_id, reachable, method: "icmp", at_unix_ms: at, poller_id: "embedded", pool: "default" } as ReachabilityEvent);
const poller = (online: boolean, poller_id: string, pool: string, at = Date.now()): Promise<void> =>
  k.ctx.bus.emit(online ? "polling.poller.online" : "polling.poller.offline", { poller_id, pool, at_unix_ms: at } as PollerEvent);

describe("node liveness", () => {
  it("fires a node-level alert with state unreachable and no metric, then clears it when the node answers", async () => {
    const node = await insertNode(k.db, "edge-rtr", { group: folder });
    await reach(node, true);
    await settle(k);
    expect(await nodeState(k, node)).toBe("ok");
    const at = Date.now();
    await reach(node, false, at);
    const fired = await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    expect(fired).toMatchObject({
      incident_key: `node:${node}:${LIVENESS_CHECK_ID}`,
      check: LIVENESS_CHECK_ID,
      at_unix_ms: at,
      metric: null,
      ifindex: null,
      if_name: null,
      row: null,
      row_name: null,
      observed_value: null,
      threshold_value: null,
      direction: null,
      resolved: false,
      severity: "critical",
      state: "unreachable",
      subject_kind: "node",
      subject_name: null,
      title: "edge-rtr is unreachable",
      folder_path: [folder],
    });
    expect(await nodeState(k, node)).toBe("unreachable");
    // still unreachable: nothing new
    await reach(node, false);
    await settle(k);
    expect(events(k, "alerts.fired", node)).toHaveLength(1);

    await reach(node, true);
    const resolved = await waitForEvent(k, "alerts.resolved", (t) => t.node === node);
    expect(resolved).toMatchObject({ check: LIVENESS_CHECK_ID, resolved: true, state: "unreachable", metric: null, at_unix_ms: at });
    expect((await history(k, "node_id = $1", [node])).map((r) => [r.state, r.resolved, r.metric])).toEqual([
      ["unreachable", false, null],
      ["unreachable", true, null],
    ]);
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([]);
    expect(await nodeState(k, node)).toBe("ok");
  });

  it("lets unreachable outrank a threshold alert in the node state", async () => {
    const node = await insertNode(k.db, "worst", { group: folder });
    await k.http
      .post("/api/v1/thresholds")
      .set({ Authorization: `Bearer ${k.adminToken}` })
      .send({ metric: "rtt_ms", scope_level: "node", scope_ids: [node], direction: "above", warning: 10 })
      .expect(201);
    await k.ctx.bus.emit("polling.sample", {
      samples: [
        {
          node_id: node,
          metric: "rtt_ms",
          value: 50,
          at_unix_ms: Date.now(),
          ifindex: null,
          if_name: null,
          row: null,
          row_name: null,
          pool: "default",
          poller_id: "embedded",
          backfill: false,
        },
      ],
    });
    await settle(k);
    expect(await nodeState(k, node)).toBe("warning");
    await reach(node, false);
    await settle(k);
    expect(await nodeState(k, node)).toBe("unreachable");
    await reach(node, true);
    await settle(k);
    expect(await nodeState(k, node)).toBe("warning");
  });

  it("suppresses the liveness notification of a node muted on the metric reachable", async () => {
    const node = await insertNode(k.db, "quiet", { group: folder });
    await rawQuery(
      k.db,
      "INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by) VALUES ($1, 'reachable', 'x', now() + interval '1 day', 't')",
      [node],
    );
    clearSeen(k);
    await reach(node, false);
    expect(await waitForEvent(k, "alerts.suppressed", (t) => t.node === node)).toMatchObject({ reason: "mute", state: "unreachable" });
    expect(events(k, "alerts.fired", node)).toEqual([]);
    expect(await history(k, "node_id = $1", [node])).toHaveLength(1);
  });

  it("ignores reachability of a node the inventory does not have", async () => {
    clearSeen(k);
    await reach("00000000-0000-4000-8000-000000000001", false);
    await settle(k);
    expect(events(k, "alerts.fired")).toEqual([]);
  });
});

describe("pools", () => {
  it("fires a pool alert when every poller of the pool is offline, and clears it when one is back", async () => {
    clearSeen(k);
    await poller(true, "east-1", "east");
    await poller(true, "east-2", "east");
    await poller(true, "west-1", "west");
    await poller(false, "east-1", "east");
    await settle(k);
    expect(events(k, "alerts.fired")).toEqual([]);
    const at = Date.now();
    await poller(false, "east-2", "east", at);
    const fired = await waitForEvent(k, "alerts.fired", (t) => t.subject_kind === "pool");
    expect(fired).toMatchObject({
      incident_key: `pool:east:${POOL_CHECK_ID}`,
      check: POOL_CHECK_ID,
      node: null,
      subject_kind: "pool",
      subject_name: "east",
      severity: "critical",
      state: "unreachable",
      metric: null,
      at_unix_ms: at,
      resolved: false,
      title: "All pollers of pool east are offline",
      folder_path: [],
    });
    expect(await history(k, "subject_kind = 'pool'")).toEqual([
      expect.objectContaining({ node_id: null, subject_name: "east", resolved: false, state: "unreachable" }),
    ]);
    expect(await activeAlerts(k, "subject_kind = 'pool'")).toEqual([expect.objectContaining({ subject_name: "east", node_id: null })]);
    // another offline report changes nothing; a poller of another pool neither
    await poller(false, "east-2", "east");
    await poller(false, "west-9", "west");
    await settle(k);
    expect(events(k, "alerts.fired")).toHaveLength(1);

    await poller(true, "east-1", "east");
    const resolved = await waitForEvent(k, "alerts.resolved", (t) => t.subject_kind === "pool");
    expect(resolved).toMatchObject({ subject_name: "east", resolved: true });
    expect(await activeAlerts(k, "subject_kind = 'pool'")).toEqual([]);
  });
});
