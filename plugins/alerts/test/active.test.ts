import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { bearer, insertActive, insertFolder, insertNode, startAlertsKernel } from "./readSupport.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
const incidents: Record<string, { id: string; incident_key: string; check_id: string }> = {};

const list = (token = k.adminToken) => k.http.get("/api/v1/alerts").set(bearer(token));

// Two kernels in one process share Ts.ED's injector: the skeleton kernel starts only after this one stopped.
describe("full mode", () => {
  beforeAll(async () => {
    k = await startAlertsKernel();
    db = k.databaseUrl!;
    ids.siteA = await insertFolder(db, "site-a");
    ids.siteB = await insertFolder(db, "site-b");
    ids.nA = await insertNode(db, "core-sw-01", ids.siteA);
    ids.nB = await insertNode(db, "branch-fw", ids.siteB);
    tokens.viewer = await k.token("viewer");
    tokens.viewerA = await k.token("viewer", { folders: [ids.siteA] });
    incidents.port = await insertActive(db, {
      node_id: ids.nA,
      metric: "if_in_util",
      ifindex: 7,
      if_name: "Gi0/7",
      severity: "warning",
      title: "Inbound utilisation of Gi0/7 above 80 %",
      fired_at: "2026-01-10T10:00:00.000001Z",
    });
    incidents.cpu = await insertActive(db, { node_id: ids.nA, metric: "cpu_util", severity: "critical", fired_at: "2026-01-10T09:00:00Z" });
    incidents.mem = await insertActive(db, {
      node_id: ids.nB,
      metric: "mem_used",
      row_key: 3,
      row_name: "Processor",
      severity: "critical",
      fired_at: "2026-01-10T11:00:00Z",
    });
    incidents.pool = await insertActive(db, {
      subject_kind: "pool",
      subject_name: "edge-pool",
      metric: null,
      severity: "critical",
      state: "unreachable",
      title: "Pool edge-pool: every poller offline",
      fired_at: "2026-01-10T08:00:00Z",
    });
    // The cpu incident is acknowledged at its current severity; the port incident only at a severity it left.
    await rawQuery(db, "INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, acked_at, note) VALUES ($1, 'critical', $2, 'alice', $3, NULL)", [
      incidents.cpu.incident_key,
      ids.nA,
      "2026-01-10T09:30:00.654321Z",
    ]);
    await rawQuery(db, "INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by) VALUES ($1, 'critical', $2, 'bob')", [
      incidents.port.incident_key,
      ids.nA,
    ]);
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("lists open incidents worst first, then newest, decorated with ack state, if_name, title and the node's name", async () => {
    const res = await list(tokens.viewer);
    expect(res.status).toBe(200);
    expect(res.body.map((a: { id: string }) => a.id)).toEqual([incidents.mem.id, incidents.cpu.id, incidents.pool.id, incidents.port.id]);
    expect(res.body[3]).toEqual({
      id: incidents.port.id,
      incident_key: incidents.port.incident_key,
      subject_kind: "node",
      node: ids.nA,
      node_name: "core-sw-01",
      subject_name: null,
      check: incidents.port.check_id,
      metric: "if_in_util",
      ifindex: 7,
      if_name: "Gi0/7",
      row: null,
      row_name: null,
      severity: "warning",
      state: "warning",
      direction: "above",
      observed_value: 95,
      threshold_value: 90,
      title: "Inbound utilisation of Gi0/7 above 80 %",
      fired_at: "2026-01-10T10:00:00.000001Z",
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      // Acked at critical only: the incident is now at warning, so its inbound ack state is empty.
      acked: null,
      symptom_of: null,
    });
    expect(res.body[1].acked).toEqual({ by: "alice", at: "2026-01-10T09:30:00.654321Z", note: null });
    expect(res.body[0]).toMatchObject({ node_name: "branch-fw", row: 3, row_name: "Processor" });
    expect(res.body[2]).toMatchObject({ subject_kind: "pool", node: null, node_name: null, subject_name: "edge-pool", state: "unreachable" });
  });

  it("shows a folder-scoped caller only the incidents of nodes in its folders", async () => {
    const res = await list(tokens.viewerA);
    expect(res.status).toBe(200);
    expect(res.body.map((a: { id: string }) => a.id)).toEqual([incidents.cpu.id, incidents.port.id]);
  });

  it("shows the node's current name", async () => {
    await rawQuery(db, "UPDATE inventory.nodes SET name = 'core-sw-01-renamed' WHERE id = $1", [ids.nA]);
    const res = await list();
    expect(res.body.find((a: { id: string }) => a.id === incidents.cpu.id).node_name).toBe("core-sw-01-renamed");
  });

  it("answers [] when nothing is open", async () => {
    const other = await k.token("viewer", { folders: ["00000000-0000-4000-8000-000000000001"] });
    expect((await list(other)).body).toEqual([]);
  });

  it("answers 401 without a token", async () => {
    expectError(await k.http.get("/api/v1/alerts"), 401, "unauthorized");
    expectError(await k.http.get("/api/v1/alerts").set(bearer("not-a-token")), 401, "unauthorized");
  });

  it("declares the read routes in the OpenAPI document", async () => {
    const doc = (await k.http.get("/api/v1/openapi.json")).body;
    for (const path of ["/api/v1/alerts", "/api/v1/alerts/ack", "/api/v1/alerts/history", "/api/v1/alerts/calendar", "/api/v1/alerts/top-nodes"]) {
      expect(doc.paths?.[path]).toBeDefined();
    }
    expect(doc.paths["/api/v1/alerts/transitions"]).toBeDefined();
    expect(doc.paths["/api/v1/mutes/bulk"].post).toBeDefined();
    expect(doc.paths["/api/v1/maintenance-windows/active"].get).toBeDefined();
    expect(JSON.stringify(doc.paths["/api/v1/alerts/ack"].post)).toContain("clear");
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    s = await startAlertsKernel({ skeleton: true });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it.each([
    ["/api/v1/alerts/history", []],
    ["/api/v1/alerts/history?severity=critical&limit=5", []],
    ["/api/v1/alerts/calendar", []],
    ["/api/v1/alerts/transitions", []],
    ["/api/v1/alerts/top-nodes", { entries: [], partial: false }],
  ])("GET %s answers the empty history answer", async (path, answer) => {
    const res = await s.http.get(path).set(bearer(s.adminToken));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(answer);
  });

  it.each([
    ["GET", "/api/v1/alerts"],
    ["GET", "/api/v1/mutes"],
    ["GET", "/api/v1/maintenance-windows"],
    ["GET", "/api/v1/maintenance-windows/active"],
    ["POST", "/api/v1/alerts/ack"],
    ["POST", "/api/v1/mutes/bulk"],
    ["POST", "/api/v1/maintenance-windows"],
    ["DELETE", "/api/v1/mutes/6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10"],
    ["DELETE", "/api/v1/maintenance-windows/6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10"],
  ])("%s %s answers 503", async (method, path) => {
    const req = method === "GET" ? s.http.get(path) : method === "POST" ? s.http.post(path).send({}) : s.http.delete(path);
    expectError(await req.set(bearer(s.adminToken)), 503, "store_unavailable");
  });

  it("still answers 401 first", async () => {
    expectError(await s.http.get("/api/v1/alerts/history"), 401, "unauthorized");
    expectError(await s.http.post("/api/v1/alerts/ack").send({ node: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10" }), 401, "unauthorized");
  });
});
