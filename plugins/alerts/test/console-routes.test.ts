// The routes the operator console added: POST /alerts/ack/bulk, GET /alerts?folder_id=, PUT /maintenance-windows/{id},
// PATCH /mutes/{id}. Each: no token / bad token 401, roles, a folder-scoped account, 400 with a stable code, 404.
import { randomUUID } from "node:crypto";
import { io, type Socket } from "socket.io-client";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { bearer, insertActive, insertFolder, insertNode, startAlertsKernel } from "./readSupport.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
const inc: Record<string, { id: string; incident_key: string; check_id: string }> = {};
const hour = 3600_000;
const future = (ms = hour) => new Date(Date.now() + ms).toISOString();

beforeAll(async () => {
  k = await startAlertsKernel();
  db = k.databaseUrl!;
  ids.siteA = await insertFolder(db, "site-a");
  ids.rackA = await insertFolder(db, "rack-a", ids.siteA);
  ids.siteB = await insertFolder(db, "site-b");
  ids.nA = await insertNode(db, "core-sw-01", ids.rackA);
  ids.nB = await insertNode(db, "branch-fw", ids.siteB);
  tokens.admin = await k.token("admin", "All", "admin-token");
  tokens.operator = await k.token("operator", "All", "ops-token");
  tokens.operatorA = await k.token("operator", { folders: [ids.siteA] }, "ops-a");
  tokens.viewer = await k.token("viewer");
  tokens.session = await k.session("operator", "All", "ops-person");
  inc.a1 = await insertActive(db, { node_id: ids.nA, metric: "cpu_util", severity: "critical" });
  inc.a2 = await insertActive(db, { node_id: ids.nA, metric: "if_in_bps", ifindex: 3, if_name: "eth0", severity: "warning" });
  inc.b1 = await insertActive(db, { node_id: ids.nB, metric: "cpu_util", severity: "warning" });
  inc.pool = await insertActive(db, { subject_kind: "pool", subject_name: "edge", metric: null, severity: "critical", state: "unreachable" });
});
afterAll(async () => {
  await k?.stop();
});

const bulk = (body: object, token = tokens.operator) => k.http.post("/api/v1/alerts/ack/bulk").set(bearer(token)).send(body);

describe("POST /alerts/ack/bulk", () => {
  it("refuses no token and a bad token (401), and a viewer (403)", async () => {
    expect((await k.http.post("/api/v1/alerts/ack/bulk").send({ ids: [inc.a1.id] })).status).toBe(401);
    expect((await bulk({ ids: [inc.a1.id] }, "nms_bad")).status).toBe(401);
    expect((await bulk({ ids: [inc.a1.id] }, tokens.viewer)).status).toBe(403);
  });

  it("answers 400 with a stable code for bad input, never a 500", async () => {
    expectError(await bulk({ ids: [] }), 400, "validation_failed");
    expectError(await bulk({ ids: ["nope"] }), 400, "validation_failed");
    expectError(await bulk({ ids: [inc.a1.id], note: "x".repeat(2001) }), 400, "validation_failed");
    expectError(await bulk({ ids: [inc.a1.id], extra: 1 }), 400, "validation_failed");
    expectError(await bulk({ ids: Array.from({ length: 1001 }, () => randomUUID()) }), 400, "validation_failed");
  });

  it("acks several alerts with one note, answers per id in the order asked, and broadcasts one event per subject", async () => {
    const socket: Socket = io(k.url, { auth: { token: tokens.operator }, transports: ["websocket"], reconnection: false, forceNew: true });
    const events: { node: string | null; incidents: { id: string }[]; by: string }[] = [];
    socket.on("alerts.ack", (p) => events.push(p));
    const sub = await new Promise<{ ok: boolean }>((resolve) => socket.emit("subscribe", { channel: "alerts.acks" }, resolve));
    expect(sub.ok).toBe(true);
    try {
      const gone = randomUUID();
      const res = await bulk({ ids: [inc.a2.id, inc.a1.id, gone, inc.a1.id.toUpperCase(), inc.b1.id], note: "maintenance tonight" });
      expect(res.status).toBe(200);
      expect(res.body.acked).toBe(3);
      expect(res.body.not_found).toBe(1);
      expect(res.body.items.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([
        [inc.a2.id, "acked"],
        [inc.a1.id, "acked"],
        [gone, "not_found"],
        [inc.b1.id, "acked"],
      ]);
      expect(res.body.items[0].incident).toEqual(
        expect.objectContaining({ id: inc.a2.id, ifindex: 3, acked: expect.objectContaining({ by: "ops-token", note: "maintenance tonight" }) }),
      );
      expect(res.body.items[2].incident).toBeNull();
      const notes = await rawQuery<{ note: string }>(db, "SELECT note FROM alerts.acks WHERE incident_key = ANY ($1)", [
        [inc.a1.incident_key, inc.a2.incident_key, inc.b1.incident_key],
      ]);
      expect(notes.map((n) => n.note)).toEqual(["maintenance tonight", "maintenance tonight", "maintenance tonight"]);
      const list = (await k.http.get("/api/v1/alerts").set(bearer(tokens.viewer))).body as { id: string; acked: { note: string } | null }[];
      expect(list.find((a) => a.id === inc.a1.id)?.acked?.note).toBe("maintenance tonight");
      for (let i = 0; i < 50 && events.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
      const byNode = new Map(events.map((e) => [e.node, e.incidents.map((x) => x.id).sort()]));
      expect(byNode.get(ids.nA)).toEqual([inc.a1.id, inc.a2.id].sort());
      expect(byNode.get(ids.nB)).toEqual([inc.b1.id]);
    } finally {
      socket.close();
    }
  });

  it("records who acked with a session as the person", async () => {
    const res = await bulk({ ids: [inc.a1.id] }, tokens.session);
    expect(res.body.items[0].incident.acked.by).toBe("ops-person");
  });

  it("clears: cleared for those with an ack, unchanged for the others", async () => {
    await rawQuery(db, "DELETE FROM alerts.acks WHERE incident_key = $1", [inc.b1.incident_key]);
    const res = await bulk({ ids: [inc.a1.id, inc.b1.id], clear: true, note: "ignored" });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { status: string }) => i.status)).toEqual(["cleared", "unchanged"]);
    expect(res.body.cleared).toBe(1);
    expect(res.body.items[0].incident.acked).toBeNull();
  });

  it("a folder-scoped account reaches only its folders' alerts; others (and named subjects) are not_found", async () => {
    const res = await bulk({ ids: [inc.a1.id, inc.b1.id, inc.pool.id] }, tokens.operatorA);
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { status: string }) => i.status)).toEqual(["acked", "not_found", "not_found"]);
    const all = await bulk({ ids: [inc.pool.id] }, tokens.admin);
    expect(all.body.items[0].status).toBe("acked");
  });
});

describe("GET /alerts?folder_id=", () => {
  it("lists the alerts of nodes beneath the folder only", async () => {
    const res = await k.http.get("/api/v1/alerts").query({ folder_id: ids.siteA }).set(bearer(tokens.viewer));
    expect(res.status).toBe(200);
    expect(res.body.map((a: { id: string }) => a.id).sort()).toEqual([inc.a1.id, inc.a2.id].sort());
    const rack = await k.http.get("/api/v1/alerts").query({ folder_id: ids.rackA }).set(bearer(tokens.viewer));
    expect(rack.body).toHaveLength(2);
  });

  it("answers 404 for a folder outside the scope or unknown, 400 for a bad id, 401 without a token", async () => {
    expectError(await k.http.get("/api/v1/alerts").query({ folder_id: ids.siteB }).set(bearer(tokens.operatorA)), 404, "not_found");
    expectError(await k.http.get("/api/v1/alerts").query({ folder_id: randomUUID() }).set(bearer(tokens.viewer)), 404, "not_found");
    expectError(await k.http.get("/api/v1/alerts").query({ folder_id: "x" }).set(bearer(tokens.viewer)), 400, "validation_failed");
    expect((await k.http.get("/api/v1/alerts").query({ folder_id: ids.siteA })).status).toBe(401);
    const scoped = await k.http.get("/api/v1/alerts").query({ folder_id: ids.rackA }).set(bearer(tokens.operatorA));
    expect(scoped.status).toBe(200);
  });
});

describe("PUT /maintenance-windows/{id}", () => {
  let windowA: string;
  let windowB: string;
  const body = (over: object = {}) => ({ name: "night work", target_kind: "node", target_ids: [ids.nA], starts_at: future(-hour), ends_at: future(), ...over });
  const put = (id: string, b: object, token = tokens.operator) => k.http.put(`/api/v1/maintenance-windows/${id}`).set(bearer(token)).send(b);

  beforeAll(async () => {
    windowA = (await k.http.post("/api/v1/maintenance-windows").set(bearer(tokens.operator)).send(body())).body.id;
    windowB = (
      await k.http
        .post("/api/v1/maintenance-windows")
        .set(bearer(tokens.operator))
        .send(body({ target_ids: [ids.nB] }))
    ).body.id;
  });

  it("replaces the window, keeps its author, and puts the node in maintenance at once", async () => {
    const res = await put(windowA, body({ name: "longer night", ends_at: future(2 * hour) }), tokens.session);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ id: windowA, name: "longer night", created_by: "ops-token", recurrence: null }));
    const state = await rawQuery<{ state: string }>(db, "SELECT state FROM alerts.node_states WHERE node_id = $1", [ids.nA]);
    expect(state[0]?.state).toBe("maintenance");
    const recurring = await put(windowA, {
      name: "weekly",
      target_kind: "folder",
      target_ids: [ids.siteA],
      recurrence: { kind: "weekly", weekdays: [0], start: "02:00", duration_mins: 60, time_zone: "UTC" },
    });
    expect(recurring.status).toBe(200);
    expect(recurring.body).toEqual(expect.objectContaining({ starts_at: null, ends_at: null, target_kind: "folder", recurrence: expect.any(Object) }));
  });

  it("refuses 401, a viewer (403), bad bodies (400), unknown ids (404)", async () => {
    expect((await k.http.put(`/api/v1/maintenance-windows/${windowA}`).send(body())).status).toBe(401);
    expect((await put(windowA, body(), "nms_bad")).status).toBe(401);
    expect((await put(windowA, body(), tokens.viewer)).status).toBe(403);
    expectError(await put(windowA, body({ ends_at: future(-hour / 2), starts_at: future(-hour) })), 400, "validation_failed");
    expectError(await put(windowA, { name: "x", target_kind: "node", target_ids: [ids.nA] }), 400, "validation_failed");
    expectError(await put(windowA, body({ target_ids: [randomUUID()] })), 400, "unknown_reference");
    expectError(await put(windowA, body({ bogus: true })), 400, "validation_failed");
    expectError(await put(randomUUID(), body()), 404, "not_found");
    expectError(await put("nope", body()), 400, "validation_failed");
  });

  it("a folder-scoped account edits only windows whose targets it sees, and only to targets it sees", async () => {
    expectError(await put(windowB, body({ target_ids: [ids.nA] }), tokens.operatorA), 404, "not_found");
    expectError(await put(windowA, body({ target_ids: [ids.nB] }), tokens.operatorA), 400, "unknown_reference");
    expect((await put(windowA, body({ name: "scoped edit" }), tokens.operatorA)).status).toBe(200);
  });
});

describe("PATCH /mutes/{id}", () => {
  let muteA: string;
  let muteB: string;
  const patch = (id: string, b: object, token = tokens.operator) => k.http.patch(`/api/v1/mutes/${id}`).set(bearer(token)).send(b);

  beforeAll(async () => {
    await k.http
      .post("/api/v1/mutes/bulk")
      .set(bearer(tokens.operator))
      .send({ node_ids: [ids.nA, ids.nB], metric_name: "cpu_util", reason: "noisy", until: future() });
    const list = (await k.http.get("/api/v1/mutes").set(bearer(tokens.operator))).body as { id: string; node_id: string }[];
    muteA = list.find((m) => m.node_id === ids.nA)!.id;
    muteB = list.find((m) => m.node_id === ids.nB)!.id;
  });

  it("moves the end and changes the reason", async () => {
    const until = future(3 * hour);
    const res = await patch(muteA, { until, reason: "still noisy" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ id: muteA, node_id: ids.nA, node_name: "core-sw-01", reason: "still noisy", metric_name: "cpu_util" }));
    expect(Date.parse(res.body.until)).toBe(Date.parse(until));
    expect((await patch(muteA, { reason: "only the reason" })).body.until).toBe(res.body.until);
  });

  it("refuses 401, a viewer (403), bad bodies (400), unknown ids (404), and scopes a folder-scoped account", async () => {
    expect((await k.http.patch(`/api/v1/mutes/${muteA}`).send({ reason: "x" })).status).toBe(401);
    expect((await patch(muteA, { reason: "x" }, "nms_bad")).status).toBe(401);
    expect((await patch(muteA, { reason: "x" }, tokens.viewer)).status).toBe(403);
    expectError(await patch(muteA, {}), 400, "validation_failed");
    expectError(await patch(muteA, { until: future(-hour) }), 400, "validation_failed");
    expectError(await patch(muteA, { until: "tomorrow" }), 400, "validation_failed");
    expectError(await patch(muteA, { reason: "  " }), 400, "validation_failed");
    expectError(await patch(muteA, { reason: "x", node_id: ids.nB }), 400, "validation_failed");
    expectError(await patch(randomUUID(), { reason: "x" }), 404, "not_found");
    expectError(await patch(muteB, { reason: "x" }, tokens.operatorA), 404, "not_found");
    expect((await patch(muteA, { reason: "scoped" }, tokens.operatorA)).status).toBe(200);
  });
});
