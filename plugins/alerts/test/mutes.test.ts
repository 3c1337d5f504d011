import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { pruneExpiredMutes } from "../repositories/MuteRepository.js";
import { bearer, insertFolder, insertNode, startAlertsKernel } from "./readSupport.js";

let k: TestKernel;
let db: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
const BULK_MAX = 5;

const future = (ms = 3_600_000) => new Date(Date.now() + ms).toISOString();
const bulk = (body: Record<string, unknown>, token = tokens.operator) =>
  k.http
    .post("/api/v1/mutes/bulk")
    .set(bearer(token))
    .send(body as object);
const list = (query: Record<string, string | number> = {}, token = tokens.viewer) => k.http.get("/api/v1/mutes").query(query).set(bearer(token));
const muteRows = (metric: string) =>
  rawQuery<{ node_id: string; reason: string; created_by: string; until: string }>(
    db,
    `SELECT node_id, reason, created_by, to_char(until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS until FROM alerts.mutes WHERE metric_name = $1 ORDER BY node_id`,
    [metric],
  );

beforeAll(async () => {
  k = await startAlertsKernel({ overrides: { pluginConfig: { alerts: { bulkMuteMax: BULK_MAX } } } });
  db = k.databaseUrl!;
  ids.siteA = await insertFolder(db, "site-a");
  ids.siteB = await insertFolder(db, "site-b");
  ids.a1 = await insertNode(db, "a1", ids.siteA);
  ids.a2 = await insertNode(db, "a2", ids.siteA);
  ids.b1 = await insertNode(db, "b1", ids.siteB);
  ids.root = await insertNode(db, "root-node");
  tokens.operator = await k.token("operator", "All", "ops");
  tokens.operatorA = await k.token("operator", { folders: [ids.siteA] }, "ops-a");
  tokens.viewer = await k.token("viewer");
  tokens.viewerA = await k.token("viewer", { folders: [ids.siteA] });
});
afterAll(async () => {
  await k?.stop();
});

describe("POST /mutes/bulk", () => {
  it("mutes a metric on each distinct node and answers {created, requested}", async () => {
    const until = "2099-01-01T00:00:00.123456Z";
    const res = await bulk({ node_ids: [ids.a1, ids.a2, ids.a1, ids.a1.toUpperCase()], metric_name: "cpu_util", reason: "replacing fans", until });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 2, requested: 2 });
    expect(await muteRows("cpu_util")).toEqual([ids.a1, ids.a2].sort().map((node_id) => ({ node_id, reason: "replacing fans", created_by: "ops", until })));
  });

  it("creates fewer than requested for missing nodes and nodes outside the caller's scope, without saying which", async () => {
    const res = await bulk({ node_ids: [ids.a1, ids.b1, ids.root, randomUUID()], metric_name: "mem_used", reason: "r", until: future() }, tokens.operatorA);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 1, requested: 4 });
    expect((await muteRows("mem_used")).map((r) => r.node_id)).toEqual([ids.a1]);
    const all = await bulk({ node_ids: [ids.b1, ids.root, randomUUID()], metric_name: "mem_used", reason: "r", until: future() });
    expect(all.body).toEqual({ created: 2, requested: 3 });
  });

  it("takes as many ids as bulkMuteMax, de-duplicated or not", async () => {
    const res = await bulk({ node_ids: [ids.a1, ids.a2, ids.b1, ids.root, ids.a1], metric_name: "disk_used", reason: "r", until: future() });
    expect(res.body).toEqual({ created: 4, requested: 4 });
  });

  it("answers {0, 0} for an empty list", async () => {
    expect((await bulk({ node_ids: [], metric_name: "disk_used", reason: "r", until: future() })).body).toEqual({ created: 0, requested: 0 });
  });

  it.each<[string, () => Record<string, unknown>]>([
    ["more ids than bulkMuteMax", () => ({ node_ids: [ids.a1, ids.a2, ids.b1, ids.root, ids.a1, ids.a2], metric_name: "m", reason: "r", until: future() })],
    ["an until in the past", () => ({ node_ids: [ids.a1], metric_name: "m", reason: "r", until: new Date(Date.now() - 1000).toISOString() })],
    ["an until of now-ish (not in the future)", () => ({ node_ids: [ids.a1], metric_name: "m", reason: "r", until: new Date().toISOString() })],
    ["an unparseable until", () => ({ node_ids: [ids.a1], metric_name: "m", reason: "r", until: "tomorrow" })],
    ["an until on 31 April", () => ({ node_ids: [ids.a1], metric_name: "m", reason: "r", until: "2099-04-31T00:00:00Z" })],
    ["an until without a zone", () => ({ node_ids: [ids.a1], metric_name: "m", reason: "r", until: "2099-01-01T00:00:00" })],
    ["a metric name with a dash", () => ({ node_ids: [ids.a1], metric_name: "cpu-util", reason: "r", until: future() })],
    ["a metric name starting with a digit", () => ({ node_ids: [ids.a1], metric_name: "1cpu", reason: "r", until: future() })],
    ["an empty metric name", () => ({ node_ids: [ids.a1], metric_name: "", reason: "r", until: future() })],
    ["a node id that is not a uuid", () => ({ node_ids: ["a1"], metric_name: "m", reason: "r", until: future() })],
    ["no reason", () => ({ node_ids: [ids.a1], metric_name: "m", until: future() })],
    ["no node_ids", () => ({ metric_name: "m", reason: "r", until: future() })],
    ["an unknown field", () => ({ node_ids: [ids.a1], metric_name: "m", reason: "r", until: future(), severity: "critical" })],
  ])("400 for %s", async (_name, body) => {
    const before = Number((await rawQuery<{ n: string }>(db, "SELECT count(*) AS n FROM alerts.mutes"))[0].n);
    expectError(await bulk(body()), 400, "validation_failed");
    expect(Number((await rawQuery<{ n: string }>(db, "SELECT count(*) AS n FROM alerts.mutes"))[0].n)).toBe(before);
  });

  it("needs AckAlerts: 401 without a token, 403 for a viewer", async () => {
    const body = { node_ids: [ids.a1], metric_name: "m", reason: "r", until: future() };
    expectError(await k.http.post("/api/v1/mutes/bulk").send(body), 401, "unauthorized");
    expectError(await bulk(body, tokens.viewer), 403, "permission_denied");
    // The route declares AckAlerts, not ManageMaintenance (an operator holds both, so the document tells them apart).
    const doc = (await k.http.get("/api/v1/openapi.json")).body;
    expect(doc.paths["/api/v1/mutes/bulk"].post.responses["403"].description).toBe("Role lacks AckAlerts");
    expect(doc.paths["/api/v1/mutes/{id}"].delete.responses["403"].description).toBe("Role lacks AckAlerts");
  });
});

describe("GET /mutes and DELETE /mutes/{id}", () => {
  beforeAll(async () => {
    // An expired mute is not listed.
    await rawQuery(
      db,
      "INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by) VALUES ($1, 'old_metric', 'r', now() - interval '1 minute', 'x')",
      [ids.a1],
    );
  });

  it("lists active mutes newest first with node names, scoped, keyset-paginated", async () => {
    const all = await rawQuery<{ id: string; node_id: string }>(
      db,
      "SELECT id, node_id FROM alerts.mutes WHERE until > now() ORDER BY created_at DESC, id DESC",
    );
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.map((m: { id: string }) => m.id)).toEqual(all.map((m) => m.id));
    expect(res.body[res.body.length - 1]).toEqual({
      id: expect.any(String),
      node_id: expect.any(String),
      node_name: expect.stringMatching(/^a[12]$/),
      metric_name: "cpu_util",
      reason: "replacing fans",
      until: "2099-01-01T00:00:00.123456Z",
      created_by: "ops",
      created_at: expect.stringMatching(/\.\d{6}Z$/),
    });
    expect(res.body.some((m: { metric_name: string }) => m.metric_name === "old_metric")).toBe(false);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await list({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      seen.push(...page.body.map((m: { id: string }) => m.id));
      cursor = page.headers["x-next-cursor"];
    } while (cursor);
    expect(seen).toEqual(all.map((m) => m.id));

    const mine = all.filter((m) => m.node_id === ids.a1 || m.node_id === ids.a2).map((m) => m.id);
    expect((await list({}, tokens.viewerA)).body.map((m: { id: string }) => m.id)).toEqual(mine);
    expect((await list({ node_id: ids.a2 })).body.every((m: { node_id: string }) => m.node_id === ids.a2)).toBe(true);
    expect((await list({ metric_name: "disk_used" })).body).toHaveLength(4);
  });

  it("400 for a bad cursor or limit, 404 for a node_id outside the scope", async () => {
    expectError(await list({ cursor: "not-a-cursor" }), 400, "invalid_cursor");
    expectError(await list({ limit: 0 }), 400, "validation_failed");
    expectError(await list({ node_id: ids.b1 }, tokens.viewerA), 404, "not_found");
  });

  it("deletes a mute (AckAlerts), 404 outside the scope or when missing, 403 for a viewer", async () => {
    const [b1] = await rawQuery<{ id: string }>(db, "SELECT id FROM alerts.mutes WHERE node_id = $1 LIMIT 1", [ids.b1]);
    const [a1] = await rawQuery<{ id: string }>(db, "SELECT id FROM alerts.mutes WHERE node_id = $1 AND until > now() LIMIT 1", [ids.a1]);
    expectError(await k.http.delete(`/api/v1/mutes/${b1.id}`).set(bearer(tokens.operatorA)), 404, "not_found");
    expectError(await k.http.delete(`/api/v1/mutes/${a1.id}`).set(bearer(tokens.viewer)), 403, "permission_denied");
    expectError(await k.http.delete(`/api/v1/mutes/${a1.id}`), 401, "unauthorized");
    expect((await k.http.delete(`/api/v1/mutes/${a1.id}`).set(bearer(tokens.operatorA))).status).toBe(204);
    expectError(await k.http.delete(`/api/v1/mutes/${a1.id}`).set(bearer(tokens.operatorA)), 404, "not_found");
    expect((await k.http.delete(`/api/v1/mutes/${b1.id}`).set(bearer(tokens.operator))).status).toBe(204);
    expectError(await k.http.delete("/api/v1/mutes/not-a-uuid").set(bearer(tokens.operator)), 400, "validation_failed");
  });

  it("a mute of a deleted node stays manageable by scope All only", async () => {
    const gone = await insertNode(db, "short-lived", ids.siteA);
    await bulk({ node_ids: [gone], metric_name: "gone_metric", reason: "r", until: future() });
    await rawQuery(db, "DELETE FROM inventory.nodes WHERE id = $1", [gone]);
    const [m] = await rawQuery<{ id: string }>(db, "SELECT id FROM alerts.mutes WHERE metric_name = 'gone_metric'");
    expect((await list({ metric_name: "gone_metric" })).body).toEqual([expect.objectContaining({ id: m.id, node_name: null })]);
    expect((await list({ metric_name: "gone_metric" }, tokens.viewerA)).body).toEqual([]);
    expectError(await k.http.delete(`/api/v1/mutes/${m.id}`).set(bearer(tokens.operatorA)), 404, "not_found");
    expect((await k.http.delete(`/api/v1/mutes/${m.id}`).set(bearer(tokens.operator))).status).toBe(204);
  });

  it("prunes mutes that ended more than keepDays ago", async () => {
    await rawQuery(
      db,
      "INSERT INTO alerts.mutes (node_id, metric_name, reason, until, created_by) VALUES ($1, 'ancient', 'r', now() - interval '8 days', 'x')",
      [ids.a2],
    );
    expect(await pruneExpiredMutes(k.kernel.context("alerts")!.store)).toBe(1);
    expect(await rawQuery(db, "SELECT 1 FROM alerts.mutes WHERE metric_name IN ('ancient')")).toEqual([]);
    // Active mutes and recently ended ones stay.
    expect(await rawQuery(db, "SELECT 1 FROM alerts.mutes WHERE metric_name = 'old_metric'")).toHaveLength(1);
  });
});
