import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { isDnsName, parseJsonPath, URL_MONITOR_METRICS } from "../services/CheckService.js";
import { bearer, folderScope, startInventoryKernel } from "./support.js";

const MISSING = "00000000-0000-4000-8000-000000000000";

let k: TestKernel;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};

async function insert(sql: string, params: unknown[] = []): Promise<string> {
  return (await rawQuery<{ id: string }>(k.databaseUrl!, sql, params))[0].id;
}

function expectError(res: { status: number; body: { error?: { code: string; message: string } } }, status: number, code: string) {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
}

// The kernel with a store runs alone: two kernels at once in one process share Ts.ED's injector, so the skeleton one starts after it stopped.
describe("with a store", () => {
  beforeAll(async () => {
    k = await startInventoryKernel();
    ids.siteA = await insert(`INSERT INTO inventory.node_groups (name) VALUES ('site-a') RETURNING id`);
    ids.rackA = await insert(`INSERT INTO inventory.node_groups (name, parent_id) VALUES ('rack-a', $1) RETURNING id`, [ids.siteA]);
    ids.siteB = await insert(`INSERT INTO inventory.node_groups (name) VALUES ('site-b') RETURNING id`);
    ids.nodeA = await insert(`INSERT INTO inventory.nodes (name, address, group_id) VALUES ('web-a', '10.1.0.1', $1) RETURNING id`, [ids.rackA]);
    ids.nodeB = await insert(`INSERT INTO inventory.nodes (name, address, group_id) VALUES ('web-b', '10.2.0.1', $1) RETURNING id`, [ids.siteB]);
    ids.nodeRoot = await insert(`INSERT INTO inventory.nodes (name, address) VALUES ('web-root', '2001:db8::7') RETURNING id`);
    ids.httpCred = await insert(`INSERT INTO inventory.credentials (name, kind, settings) VALUES ('web basic', 'http', '{}') RETURNING id`);
    ids.snmpCred = await insert(`INSERT INTO inventory.credentials (name, kind, settings) VALUES ('public ro', 'snmp_v2c', '{}') RETURNING id`);
    tokens.viewer = await k.token("viewer");
    tokens.operator = await k.token("operator");
    tokens.scoped = await k.token("operator", folderScope(ids.siteA));
    tokens.scopedViewer = await k.token("viewer", folderScope(ids.siteA));
  });
  afterAll(async () => {
    await k?.stop();
  });

  const urlPath = (node: string) => `/api/v1/nodes/${node}/url-check`;
  const dnsPath = (node: string) => `/api/v1/nodes/${node}/dns-check`;

  const putUrl = (node: string, body: unknown, token = tokens.operator) =>
    k.http
      .put(urlPath(node))
      .set(bearer(token))
      .send(body as object);
  const putDns = (node: string, body: unknown, token = tokens.operator) =>
    k.http
      .put(dnsPath(node))
      .set(bearer(token))
      .send(body as object);

  describe("URL check: PUT", () => {
    afterEach(async () => {
      await rawQuery(k.databaseUrl!, "DELETE FROM inventory.url_checks");
    });

    it("creates a check from only a url, filling every default", async () => {
      const res = await putUrl(ids.nodeA, { url: "https://web-a.example.net/health" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        node_id: ids.nodeA,
        url: "https://web-a.example.net/health",
        method: "GET",
        timeout_ms: 5000,
        follow_redirects: true,
        verify_tls: true,
        expected_status: { kind: "two_xx" },
        body_match: null,
        body_max_bytes: 65536,
        json_extract: [],
        credential_id: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        updated_at: expect.any(String),
      });
      const rows = await rawQuery(k.databaseUrl!, "SELECT url, method, expected_status, json_extract FROM inventory.url_checks WHERE node_id = $1", [
        ids.nodeA,
      ]);
      expect(rows).toEqual([{ url: "https://web-a.example.net/health", method: "GET", expected_status: { kind: "two_xx" }, json_extract: [] }]);
    });

    it("stores every field and replaces the whole check on a second PUT (omitted fields go back to their defaults)", async () => {
      const full = {
        url: "http://10.1.0.1:8080/status?x=1",
        method: "POST",
        timeout_ms: 100,
        follow_redirects: false,
        verify_tls: false,
        expected_status: { kind: "range", min: 200, max: 399 },
        body_match: { mode: "regex", pattern: "^ok( \\d+)?$" },
        body_max_bytes: 1024,
        json_extract: [
          { metric: "queue_depth", path: "items[0].value" },
          { metric: "app:latency_ms", path: "stats.p95" },
          { metric: "_root", path: "[2][1].n" },
        ],
        credential_id: ids.httpCred,
      };
      const first = await putUrl(ids.nodeA, full);
      expect(first.status).toBe(200);
      expect(first.body).toEqual(expect.objectContaining({ ...full, node_id: ids.nodeA }));
      const got = await k.http.get(urlPath(ids.nodeA)).set(bearer(tokens.viewer));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(first.body);

      const second = await putUrl(ids.nodeA, { url: "https://other.example.net/", timeout_ms: 60000, body_max_bytes: 1048576 });
      expect(second.status).toBe(200);
      expect(second.body).toEqual(
        expect.objectContaining({
          url: "https://other.example.net/",
          method: "GET",
          timeout_ms: 60000,
          body_max_bytes: 1048576,
          expected_status: { kind: "two_xx" },
          body_match: null,
          json_extract: [],
          credential_id: null,
          created_at: first.body.created_at,
        }),
      );
      expect(second.body.updated_at >= first.body.updated_at).toBe(true);
      const count = await rawQuery<{ n: number }>(k.databaseUrl!, "SELECT count(*)::int AS n FROM inventory.url_checks");
      expect(count[0].n).toBe(1);
    });

    it("returns each json_extract path exactly as sent, in either spelling", async () => {
      const json_extract = [
        { metric: "bracket", path: "items[0].value" },
        { metric: "dotted", path: "items.0.value" },
        { metric: "leading_index", path: "[2][1].n" },
        { metric: "mixed", path: "a[1].2[3].b-c.$d" },
        { metric: "plain", path: "stats.p95" },
      ];
      const put = await putUrl(ids.nodeA, { url: "https://a.example/", json_extract });
      expect(put.status).toBe(200);
      expect(put.body.json_extract).toEqual(json_extract);
      const got = await k.http.get(urlPath(ids.nodeA)).set(bearer(tokens.viewer));
      expect(got.body.json_extract).toEqual(json_extract);
      const rows = await rawQuery<{ json_extract: unknown }>(k.databaseUrl!, "SELECT json_extract FROM inventory.url_checks WHERE node_id = $1", [ids.nodeA]);
      expect(rows[0].json_extract).toEqual(json_extract);
    });

    it("accepts each method, status kind and body match mode", async () => {
      for (const method of ["GET", "HEAD", "POST", "PUT", "OPTIONS"]) {
        expect((await putUrl(ids.nodeA, { url: "https://a.example/", method })).body.method).toBe(method);
      }
      for (const expected_status of [{ kind: "two_xx" }, { kind: "exact", code: 204 }, { kind: "exact", code: 100 }, { kind: "range", min: 599, max: 599 }]) {
        expect((await putUrl(ids.nodeA, { url: "https://a.example/", expected_status })).body.expected_status).toEqual(expected_status);
      }
      for (const body_match of [
        { mode: "contains", pattern: "OK" },
        { mode: "not_contains", pattern: "ERROR (" },
        { mode: "regex", pattern: "x".repeat(1000) },
      ]) {
        expect((await putUrl(ids.nodeA, { url: "https://a.example/", body_match })).body.body_match).toEqual(body_match);
      }
      expect((await putUrl(ids.nodeA, { url: "https://a.example/", body_match: null })).body.body_match).toBeNull();
      const sixteen = Array.from({ length: 16 }, (_, i) => ({ metric: `m${i}`, path: `a.${i}` }));
      expect((await putUrl(ids.nodeA, { url: "https://a.example/", json_extract: sixteen })).body.json_extract).toEqual(sixteen);
      expect((await putUrl(ids.nodeA, { url: "https://a.example/" + "p".repeat(2048 - 18) })).status).toBe(200);
    });

    it.each<[string, unknown]>([
      ["missing url", { method: "GET" }],
      ["empty url", { url: "" }],
      ["url not a string", { url: 42 }],
      ["url not absolute", { url: "/health" }],
      ["url ftp", { url: "ftp://files.example.net/" }],
      ["url file", { url: "file:///etc/passwd" }],
      ["url javascript", { url: "javascript:alert(1)" }],
      ["url with spaces", { url: "https://a.example/a b" }],
      ["url longer than 2048", { url: "https://a.example/" + "p".repeat(2048 - 17) }],
      ["url with a password", { url: "https://user:pw@a.example/" }],
      ["method outside the list", { url: "https://a.example/", method: "DELETE" }],
      ["method lower case", { url: "https://a.example/", method: "get" }],
      ["timeout 99", { url: "https://a.example/", timeout_ms: 99 }],
      ["timeout 60001", { url: "https://a.example/", timeout_ms: 60001 }],
      ["timeout fractional", { url: "https://a.example/", timeout_ms: 150.5 }],
      ["timeout as a string", { url: "https://a.example/", timeout_ms: "5000" }],
      ["follow_redirects not boolean", { url: "https://a.example/", follow_redirects: "yes" }],
      ["body_max_bytes 1023", { url: "https://a.example/", body_max_bytes: 1023 }],
      ["body_max_bytes 1048577", { url: "https://a.example/", body_max_bytes: 1048577 }],
      ["expected_status not an object", { url: "https://a.example/", expected_status: "two_xx" }],
      ["expected_status without kind", { url: "https://a.example/", expected_status: { code: 200 } }],
      ["expected_status unknown kind", { url: "https://a.example/", expected_status: { kind: "three_xx" } }],
      ["expected_status two_xx with a code", { url: "https://a.example/", expected_status: { kind: "two_xx", code: 200 } }],
      ["expected_status exact without code", { url: "https://a.example/", expected_status: { kind: "exact" } }],
      ["expected_status exact code 99", { url: "https://a.example/", expected_status: { kind: "exact", code: 99 } }],
      ["expected_status exact code 600", { url: "https://a.example/", expected_status: { kind: "exact", code: 600 } }],
      ["expected_status exact with min", { url: "https://a.example/", expected_status: { kind: "exact", code: 200, min: 200 } }],
      ["expected_status range without max", { url: "https://a.example/", expected_status: { kind: "range", min: 200 } }],
      ["expected_status range min > max", { url: "https://a.example/", expected_status: { kind: "range", min: 400, max: 200 } }],
      ["expected_status range min 99", { url: "https://a.example/", expected_status: { kind: "range", min: 99, max: 200 } }],
      ["expected_status range max 600", { url: "https://a.example/", expected_status: { kind: "range", min: 200, max: 600 } }],
      ["expected_status range with code", { url: "https://a.example/", expected_status: { kind: "range", min: 200, max: 299, code: 200 } }],
      ["expected_status extra field", { url: "https://a.example/", expected_status: { kind: "two_xx", strict: true } }],
      ["body_match without mode", { url: "https://a.example/", body_match: { pattern: "ok" } }],
      ["body_match unknown mode", { url: "https://a.example/", body_match: { mode: "equals", pattern: "ok" } }],
      ["body_match empty pattern", { url: "https://a.example/", body_match: { mode: "contains", pattern: "" } }],
      ["body_match pattern over 1000", { url: "https://a.example/", body_match: { mode: "contains", pattern: "x".repeat(1001) } }],
      ["body_match not an object", { url: "https://a.example/", body_match: "ok" }],
      ["json_extract not an array", { url: "https://a.example/", json_extract: { metric: "a", path: "b" } }],
      ["json_extract 17 rules", { url: "https://a.example/", json_extract: Array.from({ length: 17 }, (_, i) => ({ metric: `m${i}`, path: "a" })) }],
      ["json_extract metric starting with a digit", { url: "https://a.example/", json_extract: [{ metric: "9lives", path: "a" }] }],
      ["json_extract metric with a dash", { url: "https://a.example/", json_extract: [{ metric: "queue-depth", path: "a" }] }],
      ["json_extract empty metric", { url: "https://a.example/", json_extract: [{ metric: "", path: "a" }] }],
      ["json_extract rule without path", { url: "https://a.example/", json_extract: [{ metric: "m" }] }],
      ["json_extract rule extra field", { url: "https://a.example/", json_extract: [{ metric: "m", path: "a", scale: 2 }] }],
      ...URL_MONITOR_METRICS.map(
        (metric) => [`json_extract reserved name ${metric}`, { url: "https://a.example/", json_extract: [{ metric, path: "a" }] }] as [string, unknown],
      ),
      [
        "json_extract duplicate metric",
        {
          url: "https://a.example/",
          json_extract: [
            { metric: "m", path: "a" },
            { metric: "m", path: "b" },
          ],
        },
      ],
      ["json_extract empty path", { url: "https://a.example/", json_extract: [{ metric: "m", path: "" }] }],
      ["json_extract path over 512", { url: "https://a.example/", json_extract: [{ metric: "m", path: "a".repeat(513) }] }],
      ["credential_id not a uuid", { url: "https://a.example/", credential_id: "web basic" }],
      ["unknown field", { url: "https://a.example/", interval: 60 }],
    ])("answers 400 validation_failed: %s", async (_label, body) => {
      const res = await putUrl(ids.nodeA, body);
      expectError(res, 400, "validation_failed");
      expect(res.body.error.message).not.toContain("passwd");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.url_checks")).length).toBe(0);
    });

    it.each([
      "a..b",
      "a.",
      ".a",
      "a[x]",
      "a[",
      "a[0",
      "a]",
      "a b",
      "a[-1]",
      "a[01]",
      "a.01",
      "a[0]b",
      "a.[0]",
      "a[0].",
      "items[0]..value",
      "a".repeat(33).split("").join("."),
    ])("answers 400 invalid_json_path for the malformed path %s, naming the rule", async (path) => {
      const res = await putUrl(ids.nodeA, {
        url: "https://a.example/",
        json_extract: [
          { metric: "ok", path: "items[0].value" },
          { metric: "m", path },
        ],
      });
      expectError(res, 400, "invalid_json_path");
      expect(res.body.error.message).toContain("json_extract.1.path");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.url_checks")).length).toBe(0);
    });

    it("answers 400 validation_failed for a missing body", async () => {
      const res = await k.http.put(urlPath(ids.nodeA)).set(bearer(tokens.operator));
      expectError(res, 400, "validation_failed");
    });

    it.each([["(unclosed"], ["a{2,1}"], ["*x"], ["[z-a]"]])("answers 400 invalid_regex for the body_match regex %s", async (pattern) => {
      const res = await putUrl(ids.nodeA, { url: "https://a.example/", body_match: { mode: "regex", pattern } });
      expectError(res, 400, "invalid_regex");
    });

    it("takes a pattern that is not a valid regex as plain text for contains", async () => {
      const res = await putUrl(ids.nodeA, { url: "https://a.example/", body_match: { mode: "contains", pattern: "(unclosed" } });
      expect(res.status).toBe(200);
    });

    it("answers 400 unknown_reference for a credential of another kind or none", async () => {
      expectError(await putUrl(ids.nodeA, { url: "https://a.example/", credential_id: ids.snmpCred }), 400, "unknown_reference");
      expectError(await putUrl(ids.nodeA, { url: "https://a.example/", credential_id: MISSING }), 400, "unknown_reference");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.url_checks")).length).toBe(0);
    });

    it("answers 401 without a token and 403 for a viewer", async () => {
      expectError(await k.http.put(urlPath(ids.nodeA)).send({ url: "https://a.example/" }), 401, "unauthorized");
      const res = await putUrl(ids.nodeA, { url: "https://a.example/" }, tokens.viewer);
      expect(res.status).toBe(403);
    });

    it("answers 404 for a missing node, a malformed id is 400, and a folder-scoped caller reaches only its folders", async () => {
      expectError(await putUrl(MISSING, { url: "https://a.example/" }), 404, "not_found");
      expectError(await putUrl("not-a-uuid", { url: "https://a.example/" }), 400, "validation_failed");
      expectError(await putUrl(ids.nodeB, { url: "https://a.example/" }, tokens.scoped), 404, "not_found");
      expectError(await putUrl(ids.nodeRoot, { url: "https://a.example/" }, tokens.scoped), 404, "not_found");
      // Outside the scope, a bad credential still answers 404 (nothing about the node leaks).
      expectError(await putUrl(ids.nodeB, { url: "https://a.example/", credential_id: ids.snmpCred }, tokens.scoped), 404, "not_found");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.url_checks")).length).toBe(0);
      const inside = await putUrl(ids.nodeA, { url: "https://a.example/" }, tokens.scoped);
      expect(inside.status).toBe(200);
      expect((await putUrl(ids.nodeRoot, { url: "https://root.example/" })).status).toBe(200);
    });
  });

  describe("URL check: GET and DELETE", () => {
    beforeAll(async () => {
      await rawQuery(k.databaseUrl!, "DELETE FROM inventory.url_checks");
      for (const node of [ids.nodeA, ids.nodeB]) expect((await putUrl(node, { url: "https://x.example/" }, k.adminToken)).status).toBe(200);
    });

    it("GET answers the check to a viewer", async () => {
      const res = await k.http.get(urlPath(ids.nodeB)).set(bearer(tokens.viewer));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ node_id: ids.nodeB, url: "https://x.example/" }));
    });

    it("GET answers 404 for a node without a check, a missing node, and a node outside the caller's folders", async () => {
      expectError(await k.http.get(urlPath(ids.nodeRoot)).set(bearer(tokens.viewer)), 404, "not_found");
      expectError(await k.http.get(urlPath(MISSING)).set(bearer(tokens.viewer)), 404, "not_found");
      expectError(await k.http.get(urlPath(ids.nodeB)).set(bearer(tokens.scopedViewer)), 404, "not_found");
      expect((await k.http.get(urlPath(ids.nodeA)).set(bearer(tokens.scopedViewer))).status).toBe(200);
    });

    it("GET answers 401 without a token and 400 for a malformed id", async () => {
      expectError(await k.http.get(urlPath(ids.nodeA)), 401, "unauthorized");
      expectError(await k.http.get(urlPath("123")).set(bearer(tokens.viewer)), 400, "validation_failed");
    });

    it("DELETE answers 401 without a token and 403 for a viewer", async () => {
      expectError(await k.http.delete(urlPath(ids.nodeA)), 401, "unauthorized");
      expect((await k.http.delete(urlPath(ids.nodeA)).set(bearer(tokens.viewer))).status).toBe(403);
    });

    it("DELETE answers 404 outside the caller's folders, for a missing node, and for a node without a check", async () => {
      expectError(await k.http.delete(urlPath(ids.nodeB)).set(bearer(tokens.scoped)), 404, "not_found");
      expectError(await k.http.delete(urlPath(MISSING)).set(bearer(tokens.operator)), 404, "not_found");
      expectError(await k.http.delete(urlPath(ids.nodeRoot)).set(bearer(tokens.operator)), 404, "not_found");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.url_checks WHERE node_id = $1", [ids.nodeB])).length).toBe(1);
    });

    it("DELETE removes the check (204), then answers 404", async () => {
      const res = await k.http.delete(urlPath(ids.nodeA)).set(bearer(tokens.scoped));
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      expectError(await k.http.get(urlPath(ids.nodeA)).set(bearer(tokens.viewer)), 404, "not_found");
      expectError(await k.http.delete(urlPath(ids.nodeA)).set(bearer(tokens.operator)), 404, "not_found");
    });

    it("goes with its node", async () => {
      const node = await insert(`INSERT INTO inventory.nodes (name, address) VALUES ('short-lived', '10.9.9.9') RETURNING id`);
      expect((await putUrl(node, { url: "https://gone.example/" })).status).toBe(200);
      await rawQuery(k.databaseUrl!, "DELETE FROM inventory.nodes WHERE id = $1", [node]);
      expectError(await k.http.get(urlPath(node)).set(bearer(tokens.viewer)), 404, "not_found");
    });
  });

  describe("DNS check", () => {
    afterEach(async () => {
      await rawQuery(k.databaseUrl!, "DELETE FROM inventory.dns_checks");
    });

    it("PUT with only a name fills every default; GET answers it", async () => {
      const res = await putDns(ids.nodeA, { name: "web-a.example.net" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        node_id: ids.nodeA,
        name: "web-a.example.net",
        record_type: "A",
        resolver_ip: null,
        resolver_port: 53,
        timeout_ms: 2000,
        max_depth: 5,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const got = await k.http.get(dnsPath(ids.nodeA)).set(bearer(tokens.viewer));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
    });

    it("PUT stores every field and replaces the whole check", async () => {
      const full = { name: "_sip._tcp.example.net.", record_type: "SRV", resolver_ip: "2001:db8::53", resolver_port: 5353, timeout_ms: 60000, max_depth: 16 };
      const first = await putDns(ids.nodeA, full);
      expect(first.status).toBe(200);
      expect(first.body).toEqual(expect.objectContaining(full));
      const second = await putDns(ids.nodeA, { name: "1.0.1.10.in-addr.arpa", record_type: "PTR", resolver_ip: "10.0.0.53", timeout_ms: 100, max_depth: 1 });
      expect(second.body).toEqual(
        expect.objectContaining({
          name: "1.0.1.10.in-addr.arpa",
          record_type: "PTR",
          resolver_ip: "10.0.0.53",
          resolver_port: 53,
          timeout_ms: 100,
          max_depth: 1,
        }),
      );
      expect(second.body.created_at).toBe(first.body.created_at);
      for (const record_type of ["A", "AAAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"]) {
        expect((await putDns(ids.nodeA, { name: "example.net", record_type })).body.record_type).toBe(record_type);
      }
      expect((await putDns(ids.nodeA, { name: "localhost", resolver_ip: null, resolver_port: 1 })).status).toBe(200);
      expect((await putDns(ids.nodeA, { name: ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".") })).status).toBe(200);
    });

    it.each([
      ["missing name", { record_type: "A" }],
      ["empty name", { name: "" }],
      ["name with a space", { name: "web a.example.net" }],
      ["name with an empty label", { name: "web..example.net" }],
      ["name starting with a dot", { name: ".example.net" }],
      ["name label starting with a dash", { name: "-web.example.net" }],
      ["name label over 63", { name: `${"a".repeat(64)}.example.net` }],
      ["name over 253", { name: ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(62)].join(".") }],
      ["name a URL", { name: "https://example.net/" }],
      ["record type outside the list", { name: "example.net", record_type: "ANY" }],
      ["record type lower case", { name: "example.net", record_type: "aaaa" }],
      ["resolver not an IP", { name: "example.net", resolver_ip: "dns.example.net" }],
      ["resolver a CIDR", { name: "example.net", resolver_ip: "10.0.0.0/8" }],
      ["resolver with a zone", { name: "example.net", resolver_ip: "fe80::1%eth0" }],
      ["resolver empty", { name: "example.net", resolver_ip: "" }],
      ["resolver port 0", { name: "example.net", resolver_port: 0 }],
      ["resolver port 65536", { name: "example.net", resolver_port: 65536 }],
      ["timeout 99", { name: "example.net", timeout_ms: 99 }],
      ["timeout 60001", { name: "example.net", timeout_ms: 60001 }],
      ["max_depth 0", { name: "example.net", max_depth: 0 }],
      ["max_depth 17", { name: "example.net", max_depth: 17 }],
      ["unknown field", { name: "example.net", ttl: 30 }],
    ])("PUT answers 400 validation_failed: %s", async (_label, body) => {
      expectError(await putDns(ids.nodeA, body), 400, "validation_failed");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.dns_checks")).length).toBe(0);
    });

    it("answers 401 without a token; a viewer may read but not write", async () => {
      await putDns(ids.nodeA, { name: "example.net" });
      expectError(await k.http.get(dnsPath(ids.nodeA)), 401, "unauthorized");
      expectError(await k.http.put(dnsPath(ids.nodeA)).send({ name: "example.net" }), 401, "unauthorized");
      expectError(await k.http.delete(dnsPath(ids.nodeA)), 401, "unauthorized");
      expect((await k.http.get(dnsPath(ids.nodeA)).set(bearer(tokens.viewer))).status).toBe(200);
      expect((await putDns(ids.nodeA, { name: "example.net" }, tokens.viewer)).status).toBe(403);
      expect((await k.http.delete(dnsPath(ids.nodeA)).set(bearer(tokens.viewer))).status).toBe(403);
    });

    it("answers 404 for no check, no node and a node outside the caller's folders", async () => {
      await putDns(ids.nodeB, { name: "example.net" });
      expectError(await k.http.get(dnsPath(ids.nodeA)).set(bearer(tokens.viewer)), 404, "not_found");
      expectError(await k.http.get(dnsPath(MISSING)).set(bearer(tokens.viewer)), 404, "not_found");
      expectError(await k.http.get(dnsPath(ids.nodeB)).set(bearer(tokens.scopedViewer)), 404, "not_found");
      expectError(await putDns(MISSING, { name: "example.net" }), 404, "not_found");
      expectError(await putDns(ids.nodeB, { name: "example.net" }, tokens.scoped), 404, "not_found");
      expectError(await putDns(ids.nodeRoot, { name: "example.net" }, tokens.scoped), 404, "not_found");
      expectError(await k.http.delete(dnsPath(ids.nodeB)).set(bearer(tokens.scoped)), 404, "not_found");
      expectError(await k.http.delete(dnsPath(MISSING)).set(bearer(tokens.operator)), 404, "not_found");
      expectError(await k.http.delete(dnsPath(ids.nodeA)).set(bearer(tokens.operator)), 404, "not_found");
      expect((await rawQuery(k.databaseUrl!, "SELECT 1 FROM inventory.dns_checks WHERE node_id = $1", [ids.nodeB])).length).toBe(1);
    });

    it("a folder-scoped operator manages the check of a node in its folders; DELETE answers 204 then 404", async () => {
      expect((await putDns(ids.nodeA, { name: "example.net" }, tokens.scoped)).status).toBe(200);
      expect((await k.http.get(dnsPath(ids.nodeA)).set(bearer(tokens.scopedViewer))).status).toBe(200);
      const res = await k.http.delete(dnsPath(ids.nodeA)).set(bearer(tokens.scoped));
      expect(res.status).toBe(204);
      expectError(await k.http.get(dnsPath(ids.nodeA)).set(bearer(tokens.viewer)), 404, "not_found");
      expectError(await k.http.delete(dnsPath(ids.nodeA)).set(bearer(tokens.scoped)), 404, "not_found");
    });
  });

  describe("helpers", () => {
    it("parses json paths in either spelling into the same parts", () => {
      expect(parseJsonPath("items[0].value")).toEqual(["items", "0", "value"]);
      expect(parseJsonPath("items.0.value")).toEqual(["items", "0", "value"]);
      expect(parseJsonPath("[3]")).toEqual(["3"]);
      expect(parseJsonPath("a[1][2].b-c.$d")).toEqual(["a", "1", "2", "b-c", "$d"]);
      expect(parseJsonPath("a[b]")).toBeNull();
      expect(parseJsonPath("a.")).toBeNull();
    });

    it("recognises DNS names", () => {
      expect(isDnsName("example.net.")).toBe(true);
      expect(isDnsName("_dmarc.example.net")).toBe(true);
      expect(isDnsName("example.net..")).toBe(false);
      expect(isDnsName("web-.example.net")).toBe(false);
    });
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    s = await startInventoryKernel({ skeleton: true });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it.each([
    ["GET", "url-check"],
    ["PUT", "url-check"],
    ["DELETE", "url-check"],
    ["GET", "dns-check"],
    ["PUT", "dns-check"],
    ["DELETE", "dns-check"],
  ])("%s %s answers 503", async (method, check) => {
    const path = `/api/v1/nodes/${MISSING}/${check}`;
    const auth = bearer(s.adminToken);
    const body = check === "url-check" ? { url: "https://a.example/" } : { name: "example.net" };
    const res =
      method === "GET"
        ? await s.http.get(path).set(auth)
        : method === "PUT"
          ? await s.http.put(path).set(auth).send(body)
          : await s.http.delete(path).set(auth);
    expectError(res, 503, "store_unavailable");
  });
});
