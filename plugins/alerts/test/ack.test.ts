import { randomUUID } from "node:crypto";
import { io, type Socket } from "socket.io-client";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { readSubject } from "../services/AckService.js";
import { bearer, insertActive, insertFolder, insertHistory, insertNode, startAlertsKernel } from "./readSupport.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
const inc: Record<string, { id: string; incident_key: string; check_id: string }> = {};

const ack = (body: Record<string, unknown>, token = tokens.operator) =>
  k.http
    .post("/api/v1/alerts/ack")
    .set(bearer(token))
    .send(body as object);
const acksOf = async (key: string) =>
  rawQuery<{ severity: string; acked_by: string; note: string | null }>(db, "SELECT severity, acked_by, note FROM alerts.acks WHERE incident_key = $1", [key]);

beforeAll(async () => {
  k = await startAlertsKernel();
  db = k.databaseUrl!;
  ids.siteA = await insertFolder(db, "site-a");
  ids.rackA = await insertFolder(db, "rack-a", ids.siteA);
  ids.siteB = await insertFolder(db, "site-b");
  ids.nA = await insertNode(db, "core-sw-01", ids.rackA, "edge-pool");
  ids.nB = await insertNode(db, "branch-fw", ids.siteB);
  ids.quiet = await insertNode(db, "quiet-node", ids.siteA);
  tokens.operator = await k.token("operator", "All", "ops-token");
  tokens.operatorA = await k.token("operator", { folders: [ids.siteA] }, "ops-a");
  tokens.viewer = await k.token("viewer");
  inc.cpu = await insertActive(db, { node_id: ids.nA, metric: "cpu_util", severity: "critical" });
  inc.port7 = await insertActive(db, { node_id: ids.nA, metric: "if_in_util", ifindex: 7, if_name: "Gi0/7", severity: "warning" });
  inc.port0 = await insertActive(db, {
    node_id: ids.nA,
    check_id: inc.port7.check_id,
    metric: "if_in_util",
    ifindex: 0,
    if_name: "Gi0/0",
    severity: "warning",
  });
  inc.row = await insertActive(db, { node_id: ids.nA, metric: "mem_used", row_key: 2, row_name: "I/O", severity: "warning" });
  inc.nB = await insertActive(db, { node_id: ids.nB, metric: "cpu_util", severity: "critical" });
  inc.pool = await insertActive(db, { subject_kind: "pool", subject_name: "edge-pool", metric: null, severity: "critical", state: "unreachable" });
});
afterAll(async () => {
  await k?.stop();
});

describe("readable subjects", () => {
  it.each<[Record<string, string>, unknown]>([
    [{ node: "6F1C0A52-3B8E-4F7D-9A41-2C5E8B7D9F10" }, { kind: "node", nodeId: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10" }],
    [{ subject: "pool:edge-pool" }, { kind: "pool", name: "edge-pool" }],
    [{ subject: " pool: edge pool 2 " }, { kind: "pool", name: "edge pool 2" }],
    [{ subject: "netcloud_org:Acme Corp" }, { kind: "netcloud_org", name: "Acme Corp" }],
    [{ subject: "node:6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10" }, { kind: "node", nodeId: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10" }],
    [{ subject: "node:core-sw-01" }, null],
    [{ subject: "edge-pool" }, null],
    [{ subject: "pool:" }, null],
    [{ subject: "site:x" }, null],
    [{ node: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10", subject: "pool:x" }, null],
    [{}, null],
  ])("%j", (body, want) => {
    expect(readSubject(body)).toEqual(want);
  });
});

describe("POST /alerts/ack: recording and clearing", () => {
  it("acknowledges every open incident of a node by default, at its current severity", async () => {
    const res = await ack({ node: ids.nA, note: "looking" });
    expect(res.status).toBe(200);
    expect(res.body.acked).toBe(4);
    expect(res.body.cleared).toBe(0);
    expect(res.body.incidents.map((i: { id: string }) => i.id).sort()).toEqual([inc.cpu.id, inc.port7.id, inc.port0.id, inc.row.id].sort());
    const port7 = res.body.incidents.find((i: { id: string }) => i.id === inc.port7.id);
    expect(port7).toEqual({
      id: inc.port7.id,
      incident_key: inc.port7.incident_key,
      subject_kind: "node",
      node: ids.nA,
      subject_name: null,
      check: inc.port7.check_id,
      metric: "if_in_util",
      ifindex: 7,
      row: null,
      severity: "warning",
      title: "CPU utilisation above 90",
      acked: { by: "ops-token", at: expect.stringMatching(/\.\d{6}Z$/), note: "looking" },
    });
    expect(await acksOf(inc.port7.incident_key)).toEqual([{ severity: "warning", acked_by: "ops-token", note: "looking" }]);
    expect(await acksOf(inc.nB.incident_key)).toEqual([]);
  });

  it("shows the ack in GET /alerts and on every history row of the incident at that severity", async () => {
    const list = await k.http.get("/api/v1/alerts").set(bearer(tokens.viewer));
    expect(list.body.find((a: { id: string }) => a.id === inc.cpu.id).acked).toEqual(expect.objectContaining({ by: "ops-token", note: "looking" }));
    const [fire, clear, other] = await insertHistory(db, [
      { node_id: ids.nA, incident_key: inc.cpu.incident_key, severity: "critical" },
      { node_id: ids.nA, incident_key: inc.cpu.incident_key, severity: "critical", resolved: true },
      { node_id: ids.nA, incident_key: inc.cpu.incident_key, severity: "warning" },
    ]);
    const rows = (await k.http.get("/api/v1/alerts/history").query({ node_id: ids.nA }).set(bearer(tokens.viewer))).body as {
      id: string;
      acked: unknown;
    }[];
    const byId = new Map(rows.map((r) => [r.id, r.acked]));
    expect(byId.get(fire.id)).toEqual(expect.objectContaining({ by: "ops-token" }));
    expect(byId.get(clear.id)).toEqual(expect.objectContaining({ by: "ops-token" }));
    expect(byId.get(other.id)).toBeNull();
    const acked = (await k.http.get("/api/v1/alerts/history").query({ node_id: ids.nA, acked: true }).set(bearer(tokens.viewer))).body;
    expect(acked.map((r: { id: string }) => r.id).sort()).toEqual([fire.id, clear.id].sort());
  });

  it("narrows to one incident by check and ifindex (0 is a real index), by metric, or by row", async () => {
    let res = await ack({ node: ids.nA, check: inc.port7.check_id, ifindex: 0, note: "port zero" });
    expect(res.status).toBe(200);
    expect(res.body.incidents.map((i: { id: string }) => i.id)).toEqual([inc.port0.id]);
    expect((await acksOf(inc.port0.incident_key))[0].note).toBe("port zero");
    expect((await acksOf(inc.port7.incident_key))[0].note).toBe("looking");
    res = await ack({ node: ids.nA, metric: "if_in_util", note: "both ports" });
    expect(res.body.incidents.map((i: { id: string }) => i.id).sort()).toEqual([inc.port7.id, inc.port0.id].sort());
    res = await ack({ node: ids.nA, row: 2, note: "row" });
    expect(res.body.incidents.map((i: { id: string }) => i.id)).toEqual([inc.row.id]);
  });

  it("answers 200 with nothing acked when no open incident matches", async () => {
    const res = await ack({ node: ids.quiet });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ acked: 0, cleared: 0, incidents: [] });
    expect((await ack({ node: ids.nA, metric: "no_such_metric" })).body).toEqual({ acked: 0, cleared: 0, incidents: [] });
  });

  it("clears the ack instead with clear: true, counting only incidents that had one", async () => {
    let res = await ack({ node: ids.nA, ifindex: 7, clear: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ acked: 0, cleared: 1, incidents: [expect.objectContaining({ id: inc.port7.id, acked: null })] });
    expect(await acksOf(inc.port7.incident_key)).toEqual([]);
    res = await ack({ node: ids.nA, metric: "if_in_util", clear: true });
    expect(res.body.cleared).toBe(1);
    expect(res.body.incidents).toHaveLength(2);
  });

  it("replaces an earlier ack (by, at, note)", async () => {
    await ack({ node: ids.nA, metric: "cpu_util", note: "first" });
    const second = await ack({ node: ids.nA, metric: "cpu_util" }, tokens.operatorA);
    expect(second.body.incidents[0].acked).toEqual({ by: "ops-a", at: expect.any(String), note: null });
    expect(await acksOf(inc.cpu.incident_key)).toEqual([{ severity: "critical", acked_by: "ops-a", note: null }]);
  });

  it("acknowledges a pool subject by its readable name", async () => {
    const res = await ack({ subject: "pool:edge-pool", note: "pollers rebooting" });
    expect(res.status).toBe(200);
    expect(res.body.incidents).toEqual([expect.objectContaining({ id: inc.pool.id, subject_kind: "pool", subject_name: "edge-pool", node: null })]);
    expect(await acksOf(inc.pool.incident_key)).toEqual([{ severity: "critical", acked_by: "ops-token", note: "pollers rebooting" }]);
    expect((await ack({ subject: `node:${ids.nB}` })).body.incidents.map((i: { id: string }) => i.id)).toEqual([inc.nB.id]);
  });
});

describe("POST /alerts/ack: refusals", () => {
  it.each<[string, Record<string, unknown>]>([
    ["neither node nor subject", { note: "x" }],
    ["an unreadable subject", { subject: "edge-pool" }],
    ["a node: subject that is not a uuid", { subject: "node:core-sw-01" }],
    ["an unknown subject kind", { subject: "site:emea" }],
    ["both node and subject", { node: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10", subject: "pool:edge-pool" }],
    ["node not a uuid", { node: "core-sw-01" }],
    ["clear not a boolean", { node: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10", clear: "yes" }],
    ["an unknown field", { node: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10", severity: "critical" }],
    ["ifindex negative", { node: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10", ifindex: -1 }],
  ])("400 for %s", async (_name, body) => {
    expectError(await ack(body), 400, "validation_failed");
  });

  it("400 without a body", async () => {
    expectError(await k.http.post("/api/v1/alerts/ack").set(bearer(tokens.operator)), 400, "validation_failed");
  });

  it("404 for a node outside the caller's scope, a missing node, or a named subject for a folder-scoped caller", async () => {
    const before = await acksOf(inc.nB.incident_key);
    expectError(await ack({ node: ids.nB }, tokens.operatorA), 404, "not_found");
    expectError(await ack({ subject: `node:${ids.nB}` }, tokens.operatorA), 404, "not_found");
    expectError(await ack({ node: randomUUID() }), 404, "not_found");
    expectError(await ack({ subject: "pool:edge-pool" }, tokens.operatorA), 404, "not_found");
    expectError(await ack({ subject: "pool:no-such-pool" }), 404, "not_found");
    expectError(await ack({ subject: "netcloud_org:Nobody" }), 404, "not_found");
    expect(await acksOf(inc.nB.incident_key)).toEqual(before);
  });

  it("a folder-scoped operator acknowledges inside its scope", async () => {
    expect((await ack({ node: ids.nA, metric: "mem_used" }, tokens.operatorA)).status).toBe(200);
  });

  it("401 without a token, 403 for a viewer", async () => {
    expectError(await k.http.post("/api/v1/alerts/ack").send({ node: ids.nA }), 401, "unauthorized");
    expectError(await ack({ node: ids.nA }, tokens.viewer), 403, "permission_denied");
  });
});

describe("the alerts.acks broadcast", () => {
  let sockets: Socket[] = [];
  afterEach(() => {
    for (const s of sockets) s.close();
    sockets = [];
  });

  async function subscriber(token: string): Promise<{ events: Record<string, unknown>[] }> {
    const socket = io(k.url, { auth: { token }, transports: ["websocket"], reconnection: false, forceNew: true });
    sockets.push(socket);
    const events: Record<string, unknown>[] = [];
    socket.on("alerts.ack", (e) => events.push(e));
    const res = await new Promise<{ ok: boolean }>((resolve) => socket.emit("subscribe", { channel: "alerts.acks" }, resolve));
    expect(res.ok).toBe(true);
    return { events };
  }

  const until = async (cond: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  it("reaches subscribers whose scope covers the node's folder, and not one scoped elsewhere", async () => {
    const all = await subscriber(await k.token("viewer"));
    const inSite = await subscriber(await k.token("viewer", { folders: [ids.siteA] }));
    const elsewhere = await subscriber(await k.token("viewer", { folders: [ids.siteB] }));
    const res = await ack({ node: ids.nA, metric: "cpu_util", note: "broadcast" });
    expect(res.status).toBe(200);
    await until(() => all.events.length > 0 && inSite.events.length > 0);
    const want = {
      action: "recorded",
      subject_kind: "node",
      node: ids.nA,
      subject_name: null,
      by: "ops-token",
      at: res.body.incidents[0].acked.at,
      ...res.body,
    };
    expect(all.events).toEqual([want]);
    expect(inSite.events).toEqual([want]);
    await new Promise((r) => setTimeout(r, 300));
    expect(elsewhere.events).toEqual([]);

    await ack({ node: ids.nA, metric: "cpu_util", clear: true });
    await until(() => inSite.events.length > 1);
    expect(inSite.events[1]).toEqual(expect.objectContaining({ action: "cleared", acked: 0, cleared: 1 }));
  });

  it("sends named subjects (no folder) to scope All only, and nothing when nothing changed", async () => {
    const all = await subscriber(await k.token("viewer"));
    const inSite = await subscriber(await k.token("viewer", { folders: [ids.siteA] }));
    await ack({ subject: "pool:edge-pool", clear: true });
    await until(() => all.events.length > 0);
    expect(all.events).toEqual([expect.objectContaining({ action: "cleared", subject_kind: "pool", subject_name: "edge-pool", node: null })]);
    await ack({ subject: "pool:edge-pool", clear: true }); // nothing left to clear: no broadcast
    await new Promise((r) => setTimeout(r, 300));
    expect(all.events).toHaveLength(1);
    expect(inSite.events).toEqual([]);
  });
});
