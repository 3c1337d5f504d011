import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import type { Test } from "supertest";
import { expectError } from "../../../test/support/assertions.js";
import { responseProblems } from "../../../test/support/openapi.js";
import { selfSignedCert, type SelfSignedCert } from "../../../test/support/httpTarget.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { forwardingPlugin } from "../index.js";
import type { FilterSubject } from "../lib/types.js";
import { DestinationService, type DestinationChange } from "../services/DestinationService.js";
import { ForwardingTee } from "../services/ForwardingTee.js";

const COMMUNITY = "c0mmunity-s3cret-7f1e";
const COMMUNITY2 = "c0mmunity-s3cret-second-9a2b";
const PROJECT = "nms-fwd-test";
const RSA = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
}).privateKey;
/** A service-account key file as a cloud console downloads it. */
const KEY_JSON = JSON.stringify({
  type: "service_account",
  project_id: PROJECT,
  private_key_id: "5e1f0a9c3b7d",
  private_key: RSA,
  client_email: `forwarder@${PROJECT}.iam.example.com`,
  client_id: "10987654321",
  auth_uri: "https://auth.example.com/o/oauth2/auth",
  token_uri: "https://oauth2.example.com/token",
});
/** Texts that would betray a secret anywhere they appear (the key's body, not its PEM header). */
const SECRET_MARKERS = [COMMUNITY, COMMUNITY2, RSA.split("\n")[1], RSA.split("\n")[5], "5e1f0a9c3b7d", "sealed:v1:"];
const MAX = 100;

let k: TestKernel;
let tls: SelfSignedCert;
const answered: string[] = [];
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const BASE = "/api/v1/forwarding/destinations";

/** Every answer body is kept, to check that no secret was ever in one. */
async function keep(t: Test) {
  const res = await t;
  answered.push(res.text ?? "");
  return res;
}
const post = (body: unknown, token = k.adminToken) =>
  keep(
    k.http
      .post(BASE)
      .set(bearer(token))
      .send(body as object),
  );
const put = (id: string, body: unknown) =>
  keep(
    k.http
      .put(`${BASE}/${id}`)
      .set(bearer(k.adminToken))
      .send(body as object),
  );
const get = (path = "") => keep(k.http.get(`${BASE}${path}`).set(bearer(k.adminToken)));
const del = (id: string) => keep(k.http.delete(`${BASE}/${id}`).set(bearer(k.adminToken)));

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await post(body);
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { id: expect.any(String) } });
  return res.body.id as string;
}
const service = () => k.context("forwarding").get(DestinationService);
const runtime = async (id: string) => (await service().runtimeDestinations()).find((d) => d.id === id);

const syslogUdp = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  dest_kind: "syslog_udp",
  source_kind: "syslog",
  target: "127.0.0.1:5514",
  ...extra,
});
const trapDest = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  dest_kind: "snmp_trap_udp",
  source_kind: "trap",
  target: "127.0.0.1:1162",
  community: COMMUNITY,
  ...extra,
});
const warehouse = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  dest_kind: "warehouse",
  source_kind: "flow",
  target: "warehouse.example.com:443",
  service_account_json: KEY_JSON,
  ...extra,
});

const SUBJECT: FilterSubject = {
  kind: "syslog",
  source_ip: "192.0.2.10",
  pool: null,
  facility: 4,
  severity: 2,
  hostname: "core-sw1",
  app_name: "sshd",
  message: "Failed password",
  trap_oid: null,
  varbinds: null,
  src_addr: null,
  dst_addr: null,
  proto: null,
  src_port: null,
  dst_port: null,
  src_as: null,
  dst_as: null,
};

beforeAll(async () => {
  tls = selfSignedCert();
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
        forwarding: { maxDestinations: MAX },
      },
    },
  });
});
let stopped = false;
afterAll(async () => {
  if (!stopped) await k?.stop();
});

describe("create, get, list", () => {
  it("creates with the spec's defaults and answers the view without secrets", async () => {
    const id = await create(syslogUdp("Relay A"));
    const res = await get(`/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      name: "Relay A",
      dest_kind: "syslog_udp",
      source_kind: "syslog",
      target: "127.0.0.1:5514",
      enabled: true,
      pool: null,
      rate_limit_per_sec: null,
      verbatim: true,
      ca_cert: null,
      filter: null,
      has_community: false,
      has_service_account: false,
      ambient_identity: false,
      disabled_reason: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
  });

  it("round-trips every body field; secrets are write-only and sealed at rest", async () => {
    const filter = {
      mode: "any",
      conditions: [
        { field: "severity", op: "lte", value: "3" },
        { field: "source_ip", op: "in_cidr", value: "192.0.2.0/24, 2001:db8::/32" },
      ],
    };
    const id = await create(
      syslogUdp("TLS relay", {
        dest_kind: "syslog_tls",
        target: "[::1]:6514",
        enabled: false,
        pool: "edge-1",
        rate_limit_per_sec: 500,
        verbatim: false,
        ca_cert: tls.cert,
        filter,
      }),
    );
    const view = (await get(`/${id}`)).body;
    expect(view).toMatchObject({
      dest_kind: "syslog_tls",
      target: "[::1]:6514",
      enabled: false,
      pool: "edge-1",
      rate_limit_per_sec: 500,
      verbatim: false,
      ca_cert: tls.cert,
      filter,
    });

    const trapId = await create(trapDest("Trap relay"));
    expect((await get(`/${trapId}`)).body).toMatchObject({ has_community: true, has_service_account: false, ambient_identity: false });
    const whId = await create(warehouse("Warehouse keyed"));
    expect((await get(`/${whId}`)).body).toMatchObject({ has_community: false, has_service_account: true, ambient_identity: false });
    const ambientId = await create(warehouse("Warehouse ambient", { service_account_json: undefined, source_kind: "syslog" }));
    expect((await get(`/${ambientId}`)).body).toMatchObject({ has_service_account: false, ambient_identity: true });

    const { rows } = await k
      .context("forwarding")
      .store.query<{ community: string | null; service_account_json: string | null }>(
        `SELECT community, service_account_json FROM ${k.context("forwarding").store.table("destinations")} WHERE id = ANY($1::uuid[])`,
        [[trapId, whId]],
      );
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(COMMUNITY);
    expect(stored).not.toContain(SECRET_MARKERS[2]);
    expect(rows.every((r) => (r.community ?? r.service_account_json)!.startsWith("sealed:v1:"))).toBe(true);

    // The tee gets them unsealed, with the target split and the filter compiled.
    expect(await runtime(id)).toBeUndefined(); // disabled
    const trap = await runtime(trapId);
    expect(trap).toMatchObject({ host: "127.0.0.1", port: 1162, community: COMMUNITY, service_account_json: null, verbatim: true });
    expect((await runtime(whId))?.service_account_json).toBe(KEY_JSON);
    expect((await runtime(ambientId))?.service_account_json).toBeNull();
  });

  it("pages by name, case-insensitively, with X-Next-Cursor", async () => {
    for (const n of ["page-b", "Page-A", "page-c"]) await create(syslogUdp(n));
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await get(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(2);
      names.push(...res.body.map((d: { name: string }) => d.name));
      cursor = res.headers["x-next-cursor"];
      pages++;
    } while (cursor && pages < 50);
    const all = (await get("?limit=1000")).body.map((d: { name: string }) => d.name);
    expect(names).toEqual(all);
    expect(all).toEqual([...all].sort((a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    expect(names.filter((n) => n.toLowerCase().startsWith("page-"))).toEqual(["Page-A", "page-b", "page-c"]);
    expectError(await get("?cursor=bm90LWEtY3Vyc29y"), 400, "invalid_cursor");
    expectError(await get("?limit=0"), 400, "validation_failed");
    expectError(await get("?limit=1001"), 400, "validation_failed");
  });
});

describe("validation", () => {
  it.each([
    ["invalid_target", syslogUdp("v", { target: "collector.example.net" })],
    ["invalid_target", syslogUdp("v", { target: "2001:db8::1:514" })],
    ["invalid_target", syslogUdp("v", { target: "10.0.0.1:70000" })],
    ["kind_mismatch", syslogUdp("v", { source_kind: "trap" })],
    ["kind_mismatch", { name: "v", dest_kind: "flow_udp", source_kind: "syslog", target: "127.0.0.1:2055" }],
    ["kind_mismatch", trapDest("v", { source_kind: "flow" })],
    ["invalid_pool", syslogUdp("v", { pool: "edge 1" })],
    ["invalid_pool", syslogUdp("v", { pool: "x".repeat(64) })],
    ["invalid_pool", syslogUdp("v", { pool: "" })],
    ["invalid_rate_limit", syslogUdp("v", { rate_limit_per_sec: 0 })],
    ["invalid_rate_limit", syslogUdp("v", { rate_limit_per_sec: -5 })],
    ["invalid_rate_limit", syslogUdp("v", { rate_limit_per_sec: 2147483648 })],
    ["invalid_filter", syslogUdp("v", { filter: { mode: "all", conditions: [{ field: "message", op: "in_cidr", value: "10.0.0.0/8" }] } })],
    ["invalid_filter", syslogUdp("v", { filter: { mode: "all", conditions: [{ field: "hostname", op: "lte", value: "5" }] } })],
    ["invalid_filter", syslogUdp("v", { filter: { mode: "all", conditions: [{ field: "nope", op: "eq", value: "5" }] } })],
    ["invalid_filter", syslogUdp("v", { filter: { mode: "all", conditions: [{ field: "message", op: "regex", value: "(a+)+$" }] } })],
    ["invalid_filter", syslogUdp("v", { filter: { mode: "all", conditions: [{ field: "dst_port", op: "eq", value: "65536" }] } })],
    ["invalid_filter", syslogUdp("v", { filter: { mode: "most", conditions: [] } })],
    ["invalid_filter", syslogUdp("v", { filter: { conditions: Array.from({ length: 33 }, () => ({ field: "severity", op: "lte", value: "7" })) } })],
    ["invalid_ca_cert", syslogUdp("v", { dest_kind: "syslog_tls", ca_cert: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" })],
    ["invalid_ca_cert", syslogUdp("v", { dest_kind: "syslog_tls", ca_cert: "not a certificate" })],
    ["invalid_ca_cert", syslogUdp("v", { ca_cert: "-----BEGIN CERTIFICATE-----" })],
    ["community_not_allowed", syslogUdp("v", { community: COMMUNITY })],
    ["community_not_allowed", warehouse("v", { community: COMMUNITY })],
    ["invalid_service_account", warehouse("v", { service_account_json: `{"type":"service_account","private_key":"${COMMUNITY}"` })],
    [
      "invalid_service_account",
      warehouse("v", { service_account_json: JSON.stringify({ ...JSON.parse(KEY_JSON), token_uri: "http://oauth2.example.com/token" }) }),
    ],
    ["invalid_service_account", syslogUdp("v", { service_account_json: KEY_JSON })],
    ["validation_failed", syslogUdp("v", { target: "" })],
    ["validation_failed", syslogUdp("   ")],
    ["validation_failed", syslogUdp("x".repeat(121))],
    ["validation_failed", syslogUdp("v", { dest_kind: "syslog_sctp" })],
    ["validation_failed", syslogUdp("v", { source_kind: "netflow" })],
    ["validation_failed", syslogUdp("v", { rate_limit_per_sec: 1.5 })],
    ["validation_failed", syslogUdp("v", { enabled: "yes" })],
    ["validation_failed", syslogUdp("v", { surprise: true })],
    ["validation_failed", syslogUdp("v", { filter: { conditions: [{ field: "severity", op: "lte", value: 3 }] } })],
    ["validation_failed", syslogUdp("v", { filter: { conditions: [{ field: "severity", op: "lte", value: "3", extra: 1 }] } })],
    ["validation_failed", trapDest("v", { community: "" })],
    ["validation_failed", { dest_kind: "syslog_udp", source_kind: "syslog", target: "127.0.0.1:514" }],
  ])("answers 400 %s, and writes nothing", async (codeWanted, body) => {
    const before = (await get("?limit=1000")).body.length;
    const res = await post(body);
    expectError(res, 400, codeWanted);
    expect((await get("?limit=1000")).body.length).toBe(before);
  });

  it("a duplicate name is 409 name_taken, regardless of case, on create and on rename", async () => {
    const id = await create(syslogUdp("Dup Name"));
    expectError(await post(syslogUdp("dup name")), 409, "name_taken");
    const other = await create(syslogUdp("Other name"));
    expectError(await put(other, syslogUdp("DUP NAME")), 409, "name_taken");
    // Renaming to itself (another case) is no conflict.
    expect((await put(id, syslogUdp("DUP name"))).body.name).toBe("DUP name");
  });

  it("an unknown id is 404 not_found on every route; a malformed one 400", async () => {
    const id = randomUUID();
    expectError(await get(`/${id}`), 404, "not_found");
    expectError(await get(`/${id}/status`), 404, "not_found");
    expectError(await put(id, syslogUdp("nobody")), 404, "not_found");
    expectError(await del(id), 404, "not_found");
    expectError(await get("/not-a-uuid"), 400, "validation_failed");
    expectError(await del("not-a-uuid"), 400, "validation_failed");
  });
});

describe("update (the spec's PUT) and delete", () => {
  it("replaces the whole body; an omitted secret is kept, a new one replaces it, null clears it", async () => {
    const id = await create(trapDest("Trap keep", { rate_limit_per_sec: 10, pool: "edge-1" }));
    const before = (await get(`/${id}`)).body;
    const changes: DestinationChange[] = [];
    const off = service().onChange((c) => changes.push(c));

    // Omitted community: kept. Omitted optional fields: back to their defaults (a full-body PUT).
    const res = await put(id, { name: "Trap keep", dest_kind: "snmp_trap_udp", source_kind: "trap", target: "trap-sink.example.net:162", verbatim: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, target: "trap-sink.example.net:162", rate_limit_per_sec: null, pool: null, verbatim: false, has_community: true });
    expect(res.body.updated_at > before.updated_at).toBe(true);
    expect(await runtime(id)).toMatchObject({ host: "trap-sink.example.net", port: 162, community: COMMUNITY, verbatim: false, version: res.body.updated_at });

    expect((await put(id, trapDest("Trap keep", { community: COMMUNITY2 }))).body.has_community).toBe(true);
    expect((await runtime(id))?.community).toBe(COMMUNITY2);

    expect((await put(id, trapDest("Trap keep", { community: null }))).body.has_community).toBe(false);
    expect((await runtime(id))?.community).toBeNull();

    expect(changes).toEqual([
      { id, change: "updated" },
      { id, change: "updated" },
      { id, change: "updated" },
    ]);
    off();
  });

  it("an invalid warehouse body is a 400 storing nothing; a flow re-export is accepted", async () => {
    const before = (await service().list(1000)).rows.length;
    expectError(await post(warehouse("WH bad", { target: "nope" })), 400, "invalid_target");
    const flowId = await create({ name: "Flow relay", dest_kind: "flow_udp", source_kind: "flow", target: "127.0.0.1:2055" });
    const res = await put(flowId, { name: "Flow relay", dest_kind: "flow_udp", source_kind: "flow", target: "127.0.0.1:2055", verbatim: false });
    expect(res.status).toBe(200);
    expect((await get(`/${flowId}`)).body).toMatchObject({ verbatim: false });
    expect((await service().list(1000)).rows.length).toBe(before + 1);
  });

  it("a warehouse key: omitted keeps it, null clears it (ambient identity); another kind drops it", async () => {
    const id = await create(warehouse("WH keep"));
    expect((await put(id, warehouse("WH keep", { service_account_json: undefined }))).body).toMatchObject({
      has_service_account: true,
      ambient_identity: false,
    });
    expect((await runtime(id))?.service_account_json).toBe(KEY_JSON);
    expect((await put(id, warehouse("WH keep", { service_account_json: null }))).body).toMatchObject({ has_service_account: false, ambient_identity: true });
    expect((await put(id, warehouse("WH keep"))).body.has_service_account).toBe(true);
    // A flow_udp destination has no key: the stored one goes with the kind.
    const moved = await put(id, { name: "WH keep", dest_kind: "flow_udp", source_kind: "flow", target: "127.0.0.1:2055" });
    expect(moved.body).toMatchObject({ dest_kind: "flow_udp", has_service_account: false, ambient_identity: false });
    expect((await runtime(id))?.service_account_json).toBeNull();
  });

  it("a PUT answers the same codes as a create", async () => {
    const id = await create(syslogUdp("Put codes"));
    expectError(await put(id, syslogUdp("Put codes", { target: "nope" })), 400, "invalid_target");
    expectError(await put(id, syslogUdp("Put codes", { community: COMMUNITY })), 400, "community_not_allowed");
    expectError(await put(id, syslogUdp("Put codes", { filter: { conditions: [{ field: "proto", op: "regex", value: "6" }] } })), 400, "invalid_filter");
    expectError(await put(id, { name: "Put codes" }), 400, "validation_failed");
    expect((await get(`/${id}`)).body.target).toBe("127.0.0.1:5514");
  });

  it("deletes with 204, tells the tee, and the id is gone", async () => {
    const changes: DestinationChange[] = [];
    const off = service().onChange((c) => changes.push(c));
    const id = await create(syslogUdp("Delete me"));
    const res = await del(id);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expectError(await get(`/${id}`), 404, "not_found");
    expect(await runtime(id)).toBeUndefined();
    expect(changes).toEqual([
      { id, change: "created" },
      { id, change: "deleted" },
    ]);
    off();
  });

  it("the tee's view: enabled destinations only, the filter compiled", async () => {
    const id = await create(syslogUdp("Filtered", { filter: { mode: "all", conditions: [{ field: "severity", op: "lte", value: "3" }] } }));
    const d = await runtime(id);
    expect(d?.filter(SUBJECT)).toBe(true);
    expect(d?.filter({ ...SUBJECT, severity: 6 })).toBe(false);
    await put(id, syslogUdp("Filtered", { enabled: false }));
    expect(await runtime(id)).toBeUndefined();
  });
});

describe("status", () => {
  it("answers this replica's counters with the id and name", async () => {
    const id = await create(syslogUdp("Status one"));
    const res = await get(`/${id}/status`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      name: "Status one",
      forwarded: expect.any(Number),
      dropped_filter: expect.any(Number),
      dropped_rate_limit: expect.any(Number),
      dropped_queue: expect.any(Number),
      send_errors: expect.any(Number),
      connection_errors: expect.any(Number),
      last_error_class: null,
      last_error_at: null,
      connection: expect.any(String),
      queued: expect.any(Number),
      pollers: [],
    });
  });
});

describe("bundle records and import", () => {
  it("exports the body without secrets, with id and had_secret", async () => {
    const records = await service().bundle();
    const trap = records.find((r) => r.name === "Trap relay");
    expect(trap).toEqual({
      id: expect.any(String),
      name: "Trap relay",
      dest_kind: "snmp_trap_udp",
      source_kind: "trap",
      target: "127.0.0.1:1162",
      enabled: true,
      pool: null,
      rate_limit_per_sec: null,
      verbatim: true,
      ca_cert: null,
      filter: null,
      had_secret: true,
    });
    expect(records.find((r) => r.name === "Warehouse ambient")?.had_secret).toBe(false);
    expect(records.find((r) => r.name === "Warehouse keyed")?.had_secret).toBe(true);
    const text = JSON.stringify(records);
    for (const m of SECRET_MARKERS) expect(text).not.toContain(m);
  });

  it("a destination imported without its secret arrives disabled and stays so until the secret is set", async () => {
    const record = {
      id: randomUUID(),
      name: "Imported trap",
      dest_kind: "snmp_trap_udp" as const,
      source_kind: "trap" as const,
      target: "127.0.0.1:1162",
      enabled: true,
      pool: null,
      rate_limit_per_sec: null,
      verbatim: false,
      ca_cert: null,
      filter: { mode: "all" as const, conditions: [{ field: "trap_oid" as const, op: "prefix" as const, value: "1.3.6.1.6.3.1.1.5" }] },
      had_secret: true,
    };
    expect(await service().importRow(record)).toEqual({ id: record.id, disabled_for_secret: true });
    expect((await get(`/${record.id}`)).body).toMatchObject({ enabled: false, disabled_reason: "secret_missing", has_community: false, filter: record.filter });
    expect(await runtime(record.id)).toBeUndefined();
    // Still no secret: enabling it is not enough.
    expect((await put(record.id, trapDest("Imported trap", { community: undefined, enabled: true }))).body).toMatchObject({
      enabled: false,
      disabled_reason: "secret_missing",
    });
    expect((await service().bundle()).find((r) => r.id === record.id)?.had_secret).toBe(true);
    // The secret set: enabled as the body says.
    expect((await put(record.id, trapDest("Imported trap"))).body).toMatchObject({ enabled: true, disabled_reason: null, has_community: true });
    expect((await runtime(record.id))?.community).toBe(COMMUNITY);
    // Importing it again here keeps the stored secret: nothing is disabled.
    expect(await service().importRow(record)).toEqual({ id: record.id, disabled_for_secret: false });
    expect((await get(`/${record.id}`)).body).toMatchObject({ enabled: true, has_community: true, verbatim: false });

    // A record that had no secret (ambient identity) arrives as it was.
    const ambient = { ...record, id: randomUUID(), name: "Imported ambient", dest_kind: "warehouse" as const, had_secret: false, filter: null };
    expect(await service().importRow(ambient)).toEqual({ id: ambient.id, disabled_for_secret: false });
    expect((await get(`/${ambient.id}`)).body).toMatchObject({ enabled: true, ambient_identity: true });
    // An import is checked as a create.
    await expect(service().importRow({ ...record, id: randomUUID(), name: "Bad import", target: "nope" })).rejects.toMatchObject({ code: "invalid_target" });
    // A record is untrusted JSON: a wrong shape is refused, never a crash.
    for (const bad of [
      null,
      [],
      { ...record, id: "x" },
      { ...record, id: randomUUID(), name: 7 },
      { ...record, id: randomUUID(), name: "" },
      { ...record, id: randomUUID(), dest_kind: "pigeon" },
      { ...record, id: randomUUID(), source_kind: undefined },
      { ...record, id: randomUUID(), target: null },
      { ...record, id: randomUUID(), enabled: "yes" },
      { ...record, id: randomUUID(), ca_cert: 5 },
      { ...record, id: randomUUID(), pool: ["a"] },
      { ...record, id: randomUUID(), rate_limit_per_sec: "5" },
      { ...record, id: randomUUID(), filter: "all" },
    ])
      await expect(service().importRow(bad as never)).rejects.toMatchObject({ code: "validation_failed", status: 400 });
    await expect(
      service().importRow({ ...record, id: randomUUID(), name: "Bad filter", filter: { mode: "all", conditions: [{ field: 1 }] } } as never),
    ).rejects.toMatchObject({
      code: "invalid_filter",
    });
  });
});

describe("access", () => {
  it("needs ManageSystem and an unrestricted account on every route; an admin token or session passes", async () => {
    const id = await create(syslogUdp("Access"));
    const routes: [string, string, unknown?][] = [
      ["post", BASE, syslogUdp("Access 2")],
      ["get", BASE],
      ["get", `${BASE}/${id}`],
      ["put", `${BASE}/${id}`, syslogUdp("Access")],
      ["get", `${BASE}/${id}/status`],
      ["delete", `${BASE}/${randomUUID()}`],
    ];
    const operator = await k.token("operator");
    const viewer = await k.session("viewer");
    const operatorSession = await k.session("operator");
    const scopedAdmin = await k.token("admin", { folders: [randomUUID()] });
    const adminSession = await k.session("admin");
    for (const [method, path, body] of routes) {
      const call = (token?: string) => {
        let r = (k.http as unknown as Record<string, (p: string) => Test>)[method](path);
        if (token) r = r.set(bearer(token));
        return keep(body === undefined ? r : r.send(body as object));
      };
      expectError(await call(), 401, "unauthorized");
      expectError(await call("not-a-token"), 401, "unauthorized");
      expectError(await call(operator), 403, "permission_denied");
      expectError(await call(operatorSession), 403, "permission_denied");
      expectError(await call(viewer), 403, "permission_denied");
      expectError(await call(scopedAdmin), 403, "scope_unsupported");
    }
    expect((await call2("get", `${BASE}/${id}`, adminSession)).status).toBe(200);
    expect((await call2("put", `${BASE}/${id}`, adminSession, syslogUdp("Access"))).status).toBe(200);
    expect((await call2("post", BASE, adminSession, syslogUdp("Access by session"))).status).toBe(201);
    expect((await call2("get", `${BASE}/${id}/status`, k.adminToken)).status).toBe(200);
  });

  async function call2(method: string, path: string, token: string, body?: unknown) {
    const r = (k.http as unknown as Record<string, (p: string) => Test>)[method](path).set(bearer(token));
    return keep(body === undefined ? r : r.send(body as object));
  }
});

/** Two real syslog lines: RFC 5424 from 127.0.0.1 (auth.crit, core-sw1, sshd), RFC 3164 from 127.0.0.2 (local7.info, edge-fw7, cron). */
const L1 = "<34>1 2026-11-24T09:00:00.000Z core-sw1 sshd 4242 ID47 - Failed password for root from 198.51.100.7";
const L2 = "<190>Nov 24 09:00:00 edge-fw7 cron[77]: session opened for user root";
/** [field, op, value, forwards L1, forwards L2]: every operator of the syslog fields, and fields syslog has not. */
const REAL: [string, string, string, boolean, boolean][] = [
  ["kind", "eq", "syslog", true, true],
  ["kind", "ne", "syslog", false, false],
  ["kind", "in_list", "trap, flow", false, false],
  ["source_ip", "eq", "127.0.0.1", true, false],
  ["source_ip", "ne", "127.0.0.1", false, true],
  ["source_ip", "in_list", "127.0.0.2,10.0.0.1", false, true],
  ["source_ip", "in_cidr", "127.0.0.0/31", true, false],
  ["source_ip", "not_in_cidr", "127.0.0.2/32", true, false],
  ["facility", "eq", "4", true, false],
  ["facility", "ne", "4", false, true],
  ["facility", "in_list", "23, 22", false, true],
  ["facility", "lte", "4", true, false],
  ["facility", "gte", "23", false, true],
  ["severity", "eq", "2", true, false],
  ["severity", "ne", "2", false, true],
  ["severity", "in_list", "6,7", false, true],
  ["severity", "lte", "3", true, false],
  ["severity", "gte", "6", false, true],
  ["hostname", "eq", "CORE-SW1", true, false],
  ["hostname", "ne", "core-sw1", false, true],
  ["hostname", "in_list", "edge-fw7, x", false, true],
  ["hostname", "contains", "FW", false, true],
  ["hostname", "not_contains", "fw", true, false],
  ["hostname", "prefix", "core", true, false],
  ["hostname", "regex", "^edge-fw[0-9]+$", false, true],
  ["hostname", "not_regex", "^edge", true, false],
  ["app_name", "eq", "sshd", true, false],
  ["app_name", "ne", "sshd", false, true],
  ["app_name", "in_list", "cron", false, true],
  ["app_name", "contains", "ssh", true, false],
  ["app_name", "not_contains", "ssh", false, true],
  ["app_name", "prefix", "cr", false, true],
  ["app_name", "regex", "^s", true, false],
  ["app_name", "not_regex", "^s", false, true],
  ["message", "eq", "session opened for user ROOT", false, true],
  ["message", "ne", "session opened for user root", true, false],
  ["message", "in_list", "session opened for user root, x", false, true],
  ["message", "contains", "failed password", true, false],
  ["message", "not_contains", "failed password", false, true],
  ["message", "prefix", "session", false, true],
  ["message", "regex", "from [0-9.]+$", true, false],
  ["message", "not_regex", "from [0-9.]+$", false, true],
  // What the core received itself is the `default` pool's (its embedded poller's); syslog has no trap or flow fields:
  // no condition on them holds.
  ["pool", "eq", "default", true, true],
  ["trap_oid", "prefix", "1.3.6", false, false],
  ["varbind", "not_contains", "x", false, false],
  ["dst_port", "gte", "0", false, false],
  ["src_addr", "not_in_cidr", "10.0.0.0/8", false, false],
];

describe("the filter on real parsed syslog", () => {
  let sink: Socket;
  const got: string[] = [];
  beforeAll(async () => {
    sink = createSocket("udp4");
    sink.on("message", (m) => got.push(m.toString("utf8")));
    await new Promise<void>((r) => sink.bind(0, "127.0.0.1", () => r()));
  });
  afterAll(() => sink?.close());

  it("forwards, or counts as dropped by the filter, exactly what each condition says", async () => {
    const tee = k.context("forwarding").get(ForwardingTee);
    const port = (await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] };
    const syslogPort = port.listeners.find((l) => l.name === "syslog.udp")!.port;
    const ids: string[] = [];
    for (const [i, [field, op, value]] of REAL.entries())
      ids.push(
        await create(syslogUdp(`real-${i}`, { target: `127.0.0.1:${sink.address().port}`, filter: { mode: "all", conditions: [{ field, op, value }] } })),
      );
    await tee.reload();
    await sendUdp(syslogPort, L1, "127.0.0.1");
    await sendUdp(syslogPort, L2, "127.0.0.2");
    const counts = async () => Promise.all(ids.map((id) => tee.status(id)));
    const deadline = Date.now() + 15000;
    while ((await counts()).some((c) => c.forwarded + c.dropped_filter < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const seen = (await counts()).map((c, i) => ({ condition: REAL[i].slice(0, 3).join(" "), forwarded: c.forwarded, dropped_filter: c.dropped_filter }));
    expect(seen).toEqual(REAL.map(([f, o, v, a, b]) => ({ condition: `${f} ${o} ${v}`, forwarded: +a + +b, dropped_filter: 2 - +a - +b })));
    // Verbatim: the sink got each line as sent, as many times as conditions passed it.
    const want = REAL.filter((r) => r[3]).length + REAL.filter((r) => r[4]).length;
    const deadline2 = Date.now() + 5000;
    while (got.length < want && Date.now() < deadline2) await new Promise((r) => setTimeout(r, 20));
    expect({ l1: got.filter((g) => g === L1).length, l2: got.filter((g) => g === L2).length, other: got.filter((g) => g !== L1 && g !== L2) }).toEqual({
      l1: REAL.filter((r) => r[3]).length,
      l2: REAL.filter((r) => r[4]).length,
      other: [],
    });
    // The status route answers the same counters.
    const res = await get(`/${ids[3]}/status`);
    expect(res.body).toMatchObject({ id: ids[3], name: "real-3", forwarded: 1, dropped_filter: 1, dropped_rate_limit: 0, send_errors: 0 });
    for (const id of ids) expect((await del(id)).status).toBe(204);
  });
});

describe("the destination cap", () => {
  it(`refuses a create past maxDestinations (${MAX}) with 400 too_many_destinations`, async () => {
    const count = (await get("?limit=1000")).body.length;
    expect(count).toBeLessThan(MAX);
    for (let i = count; i < MAX; i++) await create(syslogUdp(`cap-${i}`));
    expectError(await post(syslogUdp("one too many")), 400, "too_many_destinations");
    // Concurrent creates at the cap: none gets through.
    const racers = await Promise.all(Array.from({ length: 4 }, (_, i) => post(syslogUdp(`racer-${i}`))));
    expect(racers.map((r) => r.status)).toEqual([400, 400, 400, 400]);
    await del((await get("?limit=1000")).body.find((d: { name: string }) => d.name === `cap-${MAX - 1}`)?.id ?? randomUUID());
    const raced = await Promise.all(Array.from({ length: 3 }, (_, i) => post(syslogUdp(`racer2-${i}`))));
    expect(raced.map((r) => r.status).sort()).toEqual([201, 400, 400]);
    expect((await get("?limit=1000")).body.length).toBe(MAX);
  });
});

describe("secrets", () => {
  it("were never in an answer (bodies of creates, gets, lists, PUTs, status, errors)", () => {
    expect(answered.length).toBeGreaterThan(100);
    const all = answered.join("\n");
    for (const m of SECRET_MARKERS) expect(all).not.toContain(m);
  });

  it("were never in a log line", () => {
    const all = k.logs.join("\n");
    expect(all.length).toBeGreaterThan(0);
    for (const m of SECRET_MARKERS) expect(all).not.toContain(m);
  });
});

describe("OpenAPI", () => {
  it("documents the routes with their error envelopes, every 400 code, and the body's fields", async () => {
    const doc = (await k.http.get("/api/v1/openapi.json")).body;
    const paths = Object.fromEntries(Object.entries(doc.paths as Record<string, unknown>).filter(([p]) => p.startsWith("/api/v1/forwarding/")));
    expect(Object.keys(paths).sort()).toEqual([
      "/api/v1/forwarding/destinations",
      "/api/v1/forwarding/destinations/{id}",
      "/api/v1/forwarding/destinations/{id}/status",
      "/api/v1/forwarding/pollers/sync",
    ]);
    expect(responseProblems({ ...doc, paths })).toEqual([]);
    const createOp = doc.paths["/api/v1/forwarding/destinations"].post;
    const described = createOp.responses["400"].description as string;
    for (const c of [
      "invalid_target",
      "kind_mismatch",
      "invalid_pool",
      "invalid_rate_limit",
      "invalid_filter",
      "invalid_ca_cert",
      "community_not_allowed",
      "invalid_service_account",
      "too_many_destinations",
    ])
      expect(described).toContain(c);
    expect(Object.keys(doc.components.schemas.DestinationBody.properties).sort()).toEqual(
      [
        "name",
        "dest_kind",
        "source_kind",
        "target",
        "enabled",
        "pool",
        "rate_limit_per_sec",
        "verbatim",
        "ca_cert",
        "community",
        "service_account_json",
        "filter",
      ].sort(),
    );
    expect(doc.components.schemas.DestinationBody.required.sort()).toEqual(["dest_kind", "name", "source_kind", "target"]);
    expect(Object.keys(doc.components.schemas.DestinationView.properties)).not.toContain("community");
    expect(Object.keys(doc.components.schemas.DestinationView.properties)).not.toContain("service_account_json");
  });
});

describe("skeleton mode", () => {
  let s: TestKernel;
  beforeAll(async () => {
    // One Ts.ED injector per process: the skeleton kernel starts after the full one stopped.
    await k.stop();
    stopped = true;
    s = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, flowsPlugin, forwardingPlugin] });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("answers 503 store_unavailable on every route", async () => {
    const id = randomUUID();
    expectError(await s.http.post(BASE).set(bearer(s.adminToken)).send(syslogUdp("x")), 503, "store_unavailable");
    expectError(await s.http.get(BASE).set(bearer(s.adminToken)), 503, "store_unavailable");
    expectError(await s.http.get(`${BASE}/${id}`).set(bearer(s.adminToken)), 503, "store_unavailable");
    expectError(await s.http.put(`${BASE}/${id}`).set(bearer(s.adminToken)).send(syslogUdp("x")), 503, "store_unavailable");
    expectError(await s.http.delete(`${BASE}/${id}`).set(bearer(s.adminToken)), 503, "store_unavailable");
    expectError(await s.http.get(`${BASE}/${id}/status`).set(bearer(s.adminToken)), 503, "store_unavailable");
  });
});
