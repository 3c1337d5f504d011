import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { alertsPlugin } from "../index.js";
import { bearer, startEngineKernel, type EngineKernel } from "./engineSupport.js";

let k: EngineKernel;
let operator: string;
let viewer: string;
let scopedOperator: string;

const post = (body: unknown, token = k.adminToken) =>
  k.http
    .post("/api/v1/thresholds")
    .set(bearer(token))
    .send(body as object);
const put = (id: string, body: unknown, token = k.adminToken) =>
  k.http
    .put(`/api/v1/thresholds/${id}`)
    .set(bearer(token))
    .send(body as object);
const get = (id: string, token = k.adminToken) => k.http.get(`/api/v1/thresholds/${id}`).set(bearer(token));
const del = (id: string, token = k.adminToken) => k.http.delete(`/api/v1/thresholds/${id}`).set(bearer(token));
const list = (query: Record<string, string | number> = {}, token = k.adminToken) => k.http.get("/api/v1/thresholds").query(query).set(bearer(token));

const base = { metric: "cpu_load_pct", scope_level: "global", direction: "above", warning: 80, critical: 90 };

async function created(body: Record<string, unknown>) {
  const res = await post(body);
  expect(res.status).toBe(201);
  expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  const got = await get(res.body.id);
  expect(got.status).toBe(200);
  return got.body;
}

const NODE = "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10";
const NODE2 = "0b6f9c1e-8a7d-4e2f-b3c4-5d6e7f8a9b0c";

// The kernel with a store runs alone: the skeleton kernel starts after it stopped (one Ts.ED injector per process).
describe("full mode", () => {
  beforeAll(async () => {
    k = await startEngineKernel();
    operator = await k.token("operator");
    viewer = await k.token("viewer");
    scopedOperator = await k.token("operator", { folders: [randomUUID()] });
  });
  afterAll(async () => {
    await k?.stop();
  });

  describe("POST /api/v1/thresholds: normalisation", () => {
    it("stores a legacy above rule as its four bounds, dwell 1, no targets", async () => {
      const res = await post(base, operator);
      expect(res.status).toBe(201);
      expect((await get(res.body.id)).body).toEqual({
        id: res.body.id,
        metric: "cpu_load_pct",
        scope_level: "global",
        direction: "above",
        warning: 80,
        critical: 90,
        warning_above: 80,
        critical_above: 90,
        warning_below: null,
        critical_below: null,
        dwell_samples: 1,
        scope_ids: [],
        scope_id: null,
        row_match: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      });
    });

    it("reads warning and critical below for direction below", async () => {
      const body = await created({ ...base, metric: "sys_uptime_secs", direction: "below", warning: 600, critical: 60 });
      expect(body).toMatchObject({ warning_below: 600, critical_below: 60, warning_above: null, critical_above: null, warning: 600, critical: 60 });
    });

    it("lets the four bounds win over direction, warning and critical when any is sent", async () => {
      const body = await created({ ...base, direction: "above", warning: 1, critical: 2, warning_below: 10 });
      expect(body).toMatchObject({
        direction: "above",
        warning_above: null,
        critical_above: null,
        warning_below: 10,
        critical_below: null,
        // the primary pair follows the stored bounds on the direction's side
        warning: null,
        critical: null,
      });
    });

    it("treats four bounds that are all null as not sent", async () => {
      const body = await created({ ...base, warning_above: null, critical_above: null, warning_below: null, critical_below: null });
      expect(body).toMatchObject({ warning_above: 80, critical_above: 90 });
    });

    it("stores a band (above and below bounds)", async () => {
      const body = await created({
        metric: "rtt_ms",
        scope_level: "global",
        direction: "above",
        warning_above: 80,
        critical_above: 95,
        warning_below: 20,
        critical_below: 5,
      });
      expect(body).toMatchObject({ warning_above: 80, critical_above: 95, warning_below: 20, critical_below: 5, warning: 80, critical: 95 });
    });

    it("accepts a rule with only a warning or only a critical bound", async () => {
      expect(await created({ ...base, warning: 70, critical: null })).toMatchObject({ warning_above: 70, critical_above: null });
      expect(await created({ ...base, warning: undefined, critical: 99 })).toMatchObject({ warning_above: null, critical_above: 99 });
    });

    it("lets scope_ids win over scope_id", async () => {
      const body = await created({ ...base, scope_level: "node", scope_ids: [NODE], scope_id: NODE2 });
      expect(body).toMatchObject({ scope_level: "node", scope_ids: [NODE], scope_id: NODE });
    });

    it("takes scope_id alone, and scope_id when scope_ids is empty", async () => {
      expect(await created({ ...base, scope_level: "node", scope_id: NODE2 })).toMatchObject({ scope_ids: [NODE2], scope_id: NODE2 });
      expect(await created({ ...base, scope_level: "folder", scope_ids: [], scope_id: NODE })).toMatchObject({
        scope_level: "folder",
        scope_ids: [NODE],
      });
    });

    it("stores upper-case uuids lower-cased", async () => {
      expect(await created({ ...base, scope_level: "profile", scope_ids: [NODE.toUpperCase()] })).toMatchObject({ scope_ids: [NODE] });
    });

    it("keeps no targets on a global rule (scope_ids and scope_id ignored)", async () => {
      const body = await created({ ...base, scope_ids: [NODE, NODE2], scope_id: NODE });
      expect(body).toMatchObject({ scope_level: "global", scope_ids: [], scope_id: null });
    });

    it("makes a profile, folder or node rule without targets a global rule (omitted or empty = every node)", async () => {
      for (const level of ["profile", "folder", "node"]) {
        expect(await created({ ...base, scope_level: level })).toMatchObject({ scope_level: "global", scope_ids: [] });
        expect(await created({ ...base, scope_level: level, scope_ids: [] })).toMatchObject({ scope_level: "global", scope_ids: [] });
      }
    });

    it("accepts 32 distinct targets", async () => {
      const ids = Array.from({ length: 32 }, () => randomUUID());
      expect((await created({ ...base, scope_level: "node", scope_ids: ids })).scope_ids).toEqual(ids);
    });

    it("stores one interface port, index 0 included", async () => {
      expect(await created({ ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [`${NODE}:0`] })).toMatchObject({
        scope_level: "interface",
        scope_ids: [`${NODE}:0`],
        scope_id: `${NODE}:0`,
      });
      expect(await created({ ...base, metric: "if_in_bps", scope_level: "interface", scope_id: `${NODE.toUpperCase()}:17` })).toMatchObject({
        scope_ids: [`${NODE}:17`],
      });
    });

    it("stores row_match and dwell_samples; an empty row_match is none", async () => {
      expect(await created({ ...base, scope_level: "node", scope_ids: [NODE], row_match: "Core*", dwell_samples: 5 })).toMatchObject({
        row_match: "Core*",
        dwell_samples: 5,
      });
      expect(await created({ ...base, row_match: "", dwell_samples: null })).toMatchObject({ row_match: null, dwell_samples: 1 });
    });

    it("accepts a metric the polling plugin does not emit (any identifier)", async () => {
      expect(await created({ ...base, metric: "_Custom_metric9" })).toMatchObject({ metric: "_Custom_metric9" });
    });
  });

  describe("POST /api/v1/thresholds: validation", () => {
    const cases: [string, Record<string, unknown>][] = [
      ["no body fields", {}],
      ["metric missing", { ...base, metric: undefined }],
      ["metric empty", { ...base, metric: "" }],
      ["metric with a dash", { ...base, metric: "if-in-bps" }],
      ["metric starting with a digit", { ...base, metric: "1metric" }],
      ["metric with a space", { ...base, metric: "cpu load" }],
      ["metric with a dot", { ...base, metric: "cpu.load" }],
      ["metric not a string", { ...base, metric: 5 }],
      ["metric too long", { ...base, metric: "m".repeat(129) }],
      ["raw counter if_in_octets", { ...base, metric: "if_in_octets" }],
      ["raw counter if_hc_out_octets", { ...base, metric: "if_hc_out_octets" }],
      ["raw counter if_in_errors", { ...base, metric: "if_in_errors" }],
      ["raw counter if_out_discards", { ...base, metric: "if_out_discards" }],
      ["raw counter in capitals IF_HC_IN_OCTETS", { ...base, metric: "IF_HC_IN_OCTETS" }],
      ["scope_level missing", { ...base, scope_level: undefined }],
      ["scope_level outside the vocabulary", { ...base, scope_level: "site" }],
      ["scope_level in capitals", { ...base, scope_level: "GLOBAL" }],
      ["direction missing", { ...base, direction: undefined }],
      ["direction outside the vocabulary", { ...base, direction: "up" }],
      ["a bound that is a string", { ...base, warning: "80" }],
      ["a four-bound that is a string", { ...base, critical_above: "high" }],
      ["no bound at all", { metric: "cpu_load_pct", scope_level: "global", direction: "above" }],
      ["only null bounds", { ...base, warning: null, critical: null }],
      ["critical_above under warning_above", { ...base, warning_above: 90, critical_above: 80 }],
      ["critical below the direction's warning (above)", { ...base, warning: 90, critical: 80 }],
      ["critical_below over warning_below", { ...base, warning_below: 10, critical_below: 20 }],
      ["a band whose below bound reaches its above bound", { ...base, warning_above: 50, warning_below: 50 }],
      ["more than 32 scope_ids", { ...base, scope_level: "node", scope_ids: Array.from({ length: 33 }, () => randomUUID()) }],
      ["repeated scope_ids", { ...base, scope_level: "node", scope_ids: [NODE, NODE] }],
      ["scope_ids repeated up to case", { ...base, scope_level: "node", scope_ids: [NODE, NODE.toUpperCase()] }],
      ["scope_ids not an array", { ...base, scope_level: "node", scope_ids: NODE }],
      ["a node target that is not a uuid", { ...base, scope_level: "node", scope_ids: ["sw1"] }],
      ["a folder target that is not a uuid", { ...base, scope_level: "folder", scope_id: "core" }],
      ["a profile target that is not a uuid", { ...base, scope_level: "profile", scope_ids: [NODE, "x"] }],
      ["an interface rule without a port", { ...base, metric: "if_in_bps", scope_level: "interface" }],
      ["an interface rule with two ports", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [`${NODE}:1`, `${NODE}:2`] }],
      ["an interface target without ifindex", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [NODE] }],
      ["an interface target with a negative ifindex", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [`${NODE}:-1`] }],
      ["an interface target with a non-numeric ifindex", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [`${NODE}:x`] }],
      ["an interface target with ifindex past int32", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [`${NODE}:2147483648`] }],
      ["an interface target on a non-uuid node", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: ["sw1:3"] }],
      ["row_match on an interface rule", { ...base, metric: "if_in_bps", scope_level: "interface", scope_ids: [`${NODE}:1`], row_match: "Gi*" }],
      ["row_match too long", { ...base, row_match: "r".repeat(201) }],
      ["dwell_samples 0", { ...base, dwell_samples: 0 }],
      ["dwell_samples above 1000", { ...base, dwell_samples: 1001 }],
      ["dwell_samples not an integer", { ...base, dwell_samples: 1.5 }],
      ["an unknown field", { ...base, severity: "critical" }],
    ];
    it.each(cases)("answers 400 validation_failed for %s", async (_name, body) => {
      expectError(await post(body), 400, "validation_failed");
    });

    const MIB_COUNTERS = ["ifInOctets", "ifOutOctets", "ifHCInOctets", "ifHCOutOctets", "ifInErrors", "ifOutErrors", "ifInDiscards", "ifOutDiscards"];
    it.each(MIB_COUNTERS.flatMap((name) => [name, name.toLowerCase(), name.toUpperCase()]))(
      "answers 400 validation_failed for the IF-MIB raw counter name %s, as for its snake_case name",
      async (metric) => {
        const res = await post({ ...base, metric });
        expectError(res, 400, "validation_failed");
        expect(res.body.error.message).toContain("raw monotonic counter");
        expect((await list({ limit: 1000, metric })).body).toEqual([]);
      },
    );

    it("still accepts the rates of those counters and other if-prefixed identifiers", async () => {
      for (const metric of ["if_in_bps", "ifInBps", "if_in_errors_ps", "ifInOctetsRate", "if_hc_in_octets_total"]) {
        expect(await created({ ...base, metric })).toMatchObject({ metric });
      }
    });

    it("answers 400 for a missing or non-JSON body", async () => {
      expectError(await k.http.post("/api/v1/thresholds").set(bearer(k.adminToken)), 400, "validation_failed");
    });

    it("writes nothing when refused", async () => {
      const before = (await list({ limit: 1000, metric: "if_in_octets" })).body;
      await post({ ...base, metric: "if_in_octets" });
      expect((await list({ limit: 1000, metric: "if_in_octets" })).body).toEqual(before);
    });
  });

  describe("access", () => {
    it("needs a token (401), ManageConfig to write (403) and an unrestricted account to write (403 scope_unsupported)", async () => {
      expectError(await k.http.post("/api/v1/thresholds").send(base), 401, "unauthorized");
      expectError(await post(base, viewer), 403, "permission_denied");
      expectError(await post(base, scopedOperator), 403, "scope_unsupported");
      const id = (await post(base)).body.id;
      expectError(await put(id, base, viewer), 403, "permission_denied");
      expectError(await del(id, scopedOperator), 403, "scope_unsupported");
      expect((await get(id, viewer)).status).toBe(200);
      expect((await list({}, viewer)).status).toBe(200);
    });
  });

  describe("GET, PUT, DELETE /api/v1/thresholds/{id}", () => {
    it("answers 404 for an unknown id and 400 for a malformed one", async () => {
      expectError(await get(randomUUID()), 404, "not_found");
      expectError(await get("nope"), 400, "validation_failed");
      expectError(await put(randomUUID(), base), 404, "not_found");
      expectError(await del(randomUUID()), 404, "not_found");
    });

    it("replaces a rule with a full document, normalised, and keeps created_at", async () => {
      const before = await created({ ...base, scope_level: "node", scope_ids: [NODE], row_match: "x*" });
      const res = await put(before.id, { metric: "storage_used_pct", scope_level: "folder", scope_id: NODE2, direction: "below", warning: 5 }, operator);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...before,
        metric: "storage_used_pct",
        scope_level: "folder",
        scope_ids: [NODE2],
        scope_id: NODE2,
        direction: "below",
        warning: 5,
        critical: null,
        warning_above: null,
        critical_above: null,
        warning_below: 5,
        critical_below: null,
        row_match: null,
        updated_at: expect.any(String),
      });
      expect(res.body.updated_at >= before.updated_at).toBe(true);
      expect((await get(before.id)).body).toEqual(res.body);
    });

    it("validates a replacement like a creation", async () => {
      const id = (await post(base)).body.id;
      expectError(await put(id, { ...base, metric: "if_in_octets" }), 400, "validation_failed");
      expectError(await put(id, { ...base, metric: "ifHCInOctets" }), 400, "validation_failed");
      expectError(await put(id, { ...base, metric: "IFOUTDISCARDS" }), 400, "validation_failed");
      expectError(await put(id, { ...base, scope_level: "interface", scope_ids: [NODE] }), 400, "validation_failed");
      expect((await get(id)).body).toMatchObject({ metric: "cpu_load_pct", scope_level: "global" });
    });

    it("deletes a rule (204), then it is gone", async () => {
      const id = (await post(base)).body.id;
      const res = await del(id, operator);
      expect(res.status).toBe(204);
      expectError(await get(id), 404, "not_found");
      expectError(await del(id), 404, "not_found");
    });
  });

  describe("direction, kept for older clients", () => {
    it("may be left out of a body of the four bounds, and is then the side of its above bounds, else below", async () => {
      const { metric, scope_level } = base;
      const up = await post({ metric, scope_level, warning_above: 70, critical_above: 85 });
      expect(up.status).toBe(201);
      expect((await get(up.body.id)).body).toMatchObject({ direction: "above", warning: 70, critical: 85, warning_above: 70, critical_above: 85 });
      const down = await post({ metric: "rtt_ms", scope_level, warning_below: 5 });
      expect(down.status).toBe(201);
      expect((await get(down.body.id)).body).toMatchObject({ direction: "below", warning: 5, warning_below: 5 });
    });

    it("is still needed with warning and critical alone, and a body without it says so", async () => {
      const { metric, scope_level, warning, critical } = base;
      const res = await post({ metric, scope_level, warning, critical });
      expectError(res, 400, "validation_failed");
      expect(res.body.error.message).toMatch(/direction is required with warning and critical/);
    });
  });

  describe("OpenAPI", () => {
    it("documents the routes and the body, scope_ids as a nullable array of at most 32 distinct strings", async () => {
      const res = await k.http.get("/api/v1/openapi.json");
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(["/api/v1/thresholds", "/api/v1/thresholds/{id}"]));
      const body = res.body.components.schemas.ThresholdBody;
      expect(body.required).toEqual(expect.arrayContaining(["metric", "scope_level"]));
      // direction is kept for older clients; a body of the four bounds may leave it out.
      expect(body.required).not.toContain("direction");
      expect(body.properties.scope_ids).toMatchObject({ maxItems: 32, uniqueItems: true, items: { type: "string" } });
      expect(body.properties.scope_level.enum).toEqual(["global", "profile", "folder", "node", "interface"]);
    });
  });

  describe("GET /api/v1/thresholds", () => {
    it("walks every rule once with the keyset cursor, oldest first", async () => {
      const mine: string[] = [];
      for (let i = 0; i < 7; i++) mine.push((await post({ ...base, metric: "walk_metric" })).body.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const res = await list({ limit: 3, metric: "walk_metric", ...(cursor ? { cursor } : {}) });
        expect(res.status).toBe(200);
        seen.push(...res.body.map((r: { id: string }) => r.id));
        cursor = res.headers["x-next-cursor"];
        if (!cursor) break;
      }
      expect(seen).toEqual(mine);
    });

    it("filters by metric and refuses a bad cursor, limit or metric", async () => {
      const id = (await post({ ...base, metric: "only_this_metric" })).body.id;
      expect((await list({ metric: "only_this_metric" })).body.map((r: { id: string }) => r.id)).toEqual([id]);
      expectError(await list({ cursor: "garbage" }), 400, "invalid_cursor");
      expectError(await list({ limit: 0 }), 400, "validation_failed");
      expectError(await list({ limit: 1001 }), 400, "validation_failed");
      expectError(await list({ metric: "not-an-identifier" }), 400, "validation_failed");
    });
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    s = await startTestKernel({
      skeleton: true,
      plugins: [inventoryPlugin, pollingPlugin, alertsPlugin],
      overrides: { pluginConfig: { polling: { embeddedPoller: false } } },
    });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("answers 503 store_unavailable to writes and reads", async () => {
    expectError(await s.http.post("/api/v1/thresholds").set(bearer(s.adminToken)).send(base), 503, "store_unavailable");
    expectError(await s.http.get("/api/v1/thresholds").set(bearer(s.adminToken)), 503, "store_unavailable");
  });
});
