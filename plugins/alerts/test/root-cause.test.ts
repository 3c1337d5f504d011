import { rawQuery } from "../../../test/support/db.js";
import type { ReachabilityEvent } from "../../polling/index.js";
import { topologyPlugin } from "../../topology/index.js";
import { LIVENESS_CHECK_ID } from "../lib/checks.js";
import { activeAlerts, bearer, insertFolder, insertNode, settle, startEngineKernel, waitForEvent, type EngineKernel } from "./engineSupport.js";

// Root-cause alerts: the topology plugin's Upstream paths (pinned parents here; links do the same) link an
// unreachable node's incident to the nearest unreachable node upstream, in the store.
let k: EngineKernel;
let folder: string;

beforeAll(async () => {
  k = await startEngineKernel({ extraPlugins: [topologyPlugin], overrides: { pluginConfig: { topology: { upstreamTtlSecs: 1 } } } });
  folder = await insertFolder(k.db, "dc");
});
afterAll(async () => {
  await k?.stop();
});

const reach = (node_id: string, reachable: boolean, at = Date.now()): Promise<void> =>
  k.ctx.bus.emit("polling.reachability", { node_id, reachable, method: "icmp", at_unix_ms: at, poller_id: "embedded", pool: "default" } as ReachabilityEvent);
const key = (node: string) => `node:${node}:${LIVENESS_CHECK_ID}`;
const pin = (child: string, parent: string) =>
  rawQuery(k.db, "INSERT INTO topology.pins (node_id, parent_id, pinned_by) VALUES ($1, $2, 'test')", [child, parent]);
const causeOf = async (node: string) => {
  const [row] = await activeAlerts(k, "node_id = $1 AND check_id = $2", [node, LIVENESS_CHECK_ID]);
  return row ? row.cause_incident_key : "absent";
};
const fireRowCause = async (node: string) =>
  (
    await rawQuery<{ cause_incident_key: string | null }>(
      k.db,
      "SELECT cause_incident_key FROM alerts.history WHERE node_id = $1 AND NOT resolved ORDER BY recorded_at DESC LIMIT 1",
      [node],
    )
  )[0]?.cause_incident_key;
const waitTopology = () => new Promise((r) => setTimeout(r, 1100)); // the Upstream cache (upstreamTtlSecs 1)

describe("root-cause alerts", () => {
  it("marks an unreachable node whose upstream is unreachable as a symptom of the nearest unreachable node", async () => {
    const core = await insertNode(k.db, "rc-core", { group: folder });
    const dist = await insertNode(k.db, "rc-dist", { group: folder });
    const acc = await insertNode(k.db, "rc-acc", { group: folder });
    await pin(dist, core);
    await pin(acc, dist);
    await waitTopology();

    await reach(core, false);
    const coreFire = await waitForEvent(k, "alerts.fired", (t) => t.node === core);
    expect(coreFire.symptom_of).toBeNull();
    await reach(acc, false);
    const accFire = await waitForEvent(k, "alerts.fired", (t) => t.node === acc);
    expect(accFire.symptom_of).toEqual({ incident_key: key(core), node: core, node_name: "rc-core" });
    expect(await causeOf(acc)).toBe(key(core));
    expect(await fireRowCause(acc)).toBe(key(core));

    // The cause clears: its symptoms are unlinked (they clear on their own reachability) ...
    await reach(core, true);
    const coreClear = await waitForEvent(k, "alerts.resolved", (t) => t.node === core);
    expect(coreClear.symptom_of).toBeNull();
    expect(await causeOf(acc)).toBeNull();
    // ... and a symptom's clear still says what it was a symptom of (a root-cause-only rule stays quiet).
    await reach(acc, true);
    const accClear = await waitForEvent(k, "alerts.resolved", (t) => t.node === acc);
    expect(accClear.symptom_of).toMatchObject({ incident_key: key(core), node: core });
  });

  it("re-points already-open incidents below to an upstream incident that fires later (the root), history fire row too", async () => {
    const up = await insertNode(k.db, "rc-up", { group: folder });
    const a = await insertNode(k.db, "rc-a", { group: folder });
    const b = await insertNode(k.db, "rc-b", { group: folder });
    const other = await insertNode(k.db, "rc-other", { group: folder });
    await pin(a, up);
    await pin(b, a);
    await waitTopology();

    await reach(b, false);
    await reach(other, false);
    await waitForEvent(k, "alerts.fired", (t) => t.node === other);
    expect(await causeOf(b)).toBeNull();
    await reach(a, false);
    expect((await waitForEvent(k, "alerts.fired", (t) => t.node === a)).symptom_of).toBeNull();
    expect(await causeOf(b)).toBe(key(a));
    await reach(up, false);
    const upFire = await waitForEvent(k, "alerts.fired", (t) => t.node === up);
    expect(upFire.symptom_of).toBeNull();
    expect(await causeOf(b)).toBe(key(up));
    expect(await causeOf(a)).toBe(key(up));
    expect(await fireRowCause(b)).toBe(key(up));
    expect(await causeOf(other)).toBeNull();

    // GET /alerts shows the link.
    const res = await k.http.get("/api/v1/alerts").set(bearer(k.adminToken));
    expect(res.status).toBe(200);
    const rows = res.body as { node: string; symptom_of: unknown }[];
    expect(rows.find((r) => r.node === b)?.symptom_of).toEqual({ incident_key: key(up), node: up, node_name: "rc-up" });
    expect(rows.find((r) => r.node === up)?.symptom_of).toBeNull();

    for (const n of [up, a, b, other]) await reach(n, true);
    await settle(k);
    // History keeps the link: b's fire row (marked after it was announced) and its clear name the root cause.
    const hist = await k.http.get(`/api/v1/alerts/history?node_id=${b}`).set(bearer(k.adminToken));
    expect(hist.status).toBe(200);
    const bRows = hist.body as { resolved: boolean; symptom_of: { incident_key: string } | null }[];
    expect(bRows.map((r) => [r.resolved, r.symptom_of?.incident_key])).toEqual([
      [true, key(up)],
      [false, key(up)],
    ]);
    expect(await activeAlerts(k, "node_id = ANY($1::uuid[])", [[up, a, b, other]])).toEqual([]);
  });
});
