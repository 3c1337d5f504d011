import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../index.js";
import { CollectionTemplateService } from "../services/CollectionTemplateService.js";

let k: TestKernel;
let db: string;
let viewer: string;
let operator: string;
let scopedOperator: string;

const BASE = "/api/v1/collection-templates";
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const post = (path: string, body: unknown, token = k.adminToken) =>
  k.http
    .post(path)
    .set(bearer(token))
    .send(body as object);
const put = (path: string, body: unknown, token = k.adminToken) =>
  k.http
    .put(path)
    .set(bearer(token))
    .send(body as object);
const get = (path: string, token = k.adminToken) => k.http.get(path).set(bearer(token));
const del = (path: string, token = k.adminToken) => k.http.delete(path).set(bearer(token));

async function createTemplate(body: Record<string, unknown>): Promise<string> {
  const res = await post(BASE, body);
  if (res.status !== 201) throw new Error(`template create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

async function createItem(templateId: string, body: Record<string, unknown>): Promise<string> {
  const res = await post(`${BASE}/${templateId}/items`, body);
  if (res.status !== 201) throw new Error(`item create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const item = (over: Record<string, unknown> = {}) => ({
  collection: "scalar",
  metric_kind: "gauge",
  metric_name: "ups_load_pct",
  oid: "1.3.6.1.2.1.33.1.4.4.1.5.1",
  ...over,
});

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin] });
  db = k.databaseUrl!;
  viewer = await k.token("viewer");
  operator = await k.token("operator");
  const folder = (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.node_groups (name) VALUES ('site') RETURNING id"))[0].id;
  scopedOperator = await k.token("operator", { folders: [folder] });
});
afterAll(async () => {
  await k?.stop();
});

describe("collection templates", () => {
  it("creates, reads, lists by name, replaces and deletes a template", async () => {
    const res = await post(BASE, { name: "  UPS basics ", description: "RFC 1628" }, operator);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String) });
    const id = res.body.id as string;
    expect((await get(`${BASE}/${id}`, viewer)).body).toEqual({ id, name: "UPS basics", description: "RFC 1628", item_count: 0, profile_ids: [] });

    const other = await createTemplate({ name: "apc extras" });
    const list = await get(BASE, viewer);
    expect(list.status).toBe(200);
    const names = (list.body as { name: string }[]).map((t) => t.name);
    expect(names.indexOf("apc extras")).toBeLessThan(names.indexOf("UPS basics"));

    const replaced = await put(`${BASE}/${id}`, { name: "UPS (RFC 1628)" }, operator);
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ id, name: "UPS (RFC 1628)", description: null, item_count: 0, profile_ids: [] });

    expect((await del(`${BASE}/${other}`, operator)).status).toBe(204);
    expectError(await get(`${BASE}/${other}`), 404, "not_found");
    expectError(await del(`${BASE}/${other}`), 404, "not_found");
  });

  it("pages the list with limit and X-Next-Cursor", async () => {
    for (const n of ["page-a", "page-b", "page-c"]) await createTemplate({ name: n });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await k.http
        .get(BASE)
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(bearer(viewer));
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body as { name: string }[]).map((t) => t.name));
      cursor = res.headers["x-next-cursor"];
    } while (cursor);
    expect(seen.filter((n) => n.startsWith("page-"))).toEqual(["page-a", "page-b", "page-c"]);
    expect(new Set(seen).size).toBe(seen.length);
    expectError(await k.http.get(BASE).query({ cursor: "nonsense" }).set(bearer(viewer)), 400, "invalid_cursor");
    expectError(await k.http.get(BASE).query({ limit: 0 }).set(bearer(viewer)), 400, "validation_failed");
  });

  it("409 name_taken on a duplicate name, regardless of case", async () => {
    const id = await createTemplate({ name: "Dup Name" });
    expectError(await post(BASE, { name: "dup name" }), 409, "name_taken");
    const other = await createTemplate({ name: "Another" });
    expectError(await put(`${BASE}/${other}`, { name: "DUP NAME" }), 409, "name_taken");
    expect((await put(`${BASE}/${id}`, { name: "Dup Name", description: "same name, itself" })).status).toBe(200);
  });

  it.each([
    ["no name", {}],
    ["empty name", { name: "" }],
    ["blank name", { name: "   " }],
    ["name too long", { name: "x".repeat(201) }],
    ["unknown field", { name: "x", color: "red" }],
    ["description not a string", { name: "x", description: 5 }],
  ])("400 validation_failed: %s", async (_label, body) => {
    expectError(await post(BASE, body), 400, "validation_failed");
  });

  it("400 on a path id that is not a UUID, 404 on an unknown one", async () => {
    expectError(await get(`${BASE}/not-a-uuid`), 400, "validation_failed");
    expectError(await get(`${BASE}/${randomUUID()}`), 404, "not_found");
    expectError(await put(`${BASE}/${randomUUID()}`, { name: "ghost" }), 404, "not_found");
  });

  it("401 without a token, 403 for a viewer writing and for a folder-scoped operator", async () => {
    const id = await createTemplate({ name: "auth checks" });
    expectError(await k.http.get(BASE), 401, "unauthorized");
    expectError(await k.http.post(BASE).send({ name: "x" }), 401, "unauthorized");
    expectError(await k.http.get(`${BASE}/${id}/items`), 401, "unauthorized");
    expectError(await post(BASE, { name: "x" }, viewer), 403, "permission_denied");
    expectError(await put(`${BASE}/${id}`, { name: "x" }, viewer), 403, "permission_denied");
    expectError(await del(`${BASE}/${id}`, viewer), 403, "permission_denied");
    expectError(await post(`${BASE}/${id}/items`, item(), viewer), 403, "permission_denied");
    expectError(await put(`/api/v1/profiles/${randomUUID()}/collection-templates/${id}`, {}, viewer), 403, "permission_denied");
    expectError(await post(BASE, { name: "x" }, scopedOperator), 403, "scope_unsupported");
    expectError(await post(`${BASE}/${id}/items`, item(), scopedOperator), 403, "scope_unsupported");
    // Reading is allowed to any reader, folder-scoped or not.
    expect((await get(`${BASE}/${id}`, scopedOperator)).status).toBe(200);
  });
});

describe("template items", () => {
  let tpl: string;
  beforeAll(async () => {
    tpl = await createTemplate({ name: "items home" });
  });

  it("creates items (defaults: enabled), drops a leading dot from the OID, lists by metric name", async () => {
    const a = await post(`${BASE}/${tpl}/items`, item({ metric_name: "zz_gauge", oid: ".1.3.6.1.4.1.99999.1.2.0" }), operator);
    expect(a.status).toBe(201);
    const b = await createItem(tpl, { collection: "table", metric_kind: "counter", metric_name: "aa_counter", oid: "1.3.6.1.4.1.99999.2.1.3", enabled: false });
    expect((await get(`${BASE}/${tpl}/items/${a.body.id}`, viewer)).body).toEqual({
      id: a.body.id,
      template_id: tpl,
      collection: "scalar",
      metric_kind: "gauge",
      metric_name: "zz_gauge",
      oid: "1.3.6.1.4.1.99999.1.2.0",
      enabled: true,
    });
    const list = await get(`${BASE}/${tpl}/items`, viewer);
    expect(list.status).toBe(200);
    expect((list.body as { id: string }[]).map((i) => i.id)).toEqual([b, a.body.id]);
    expect((await get(`${BASE}/${tpl}`)).body.item_count).toBe(2);
  });

  it("replaces and deletes an item; 404 for an item of another template", async () => {
    const id = await createItem(tpl, item({ metric_name: "to_replace" }));
    const res = await put(
      `${BASE}/${tpl}/items/${id}`,
      item({ metric_name: "replaced", metric_kind: "counter", collection: "table", oid: "1.3.6.1.4.1.9.9.1" }),
      operator,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      template_id: tpl,
      collection: "table",
      metric_kind: "counter",
      metric_name: "replaced",
      oid: "1.3.6.1.4.1.9.9.1",
      enabled: true,
    });
    const other = await createTemplate({ name: "other items home" });
    expectError(await get(`${BASE}/${other}/items/${id}`), 404, "not_found");
    expectError(await del(`${BASE}/${other}/items/${id}`), 404, "not_found");
    expect((await del(`${BASE}/${tpl}/items/${id}`, operator)).status).toBe(204);
    expectError(await get(`${BASE}/${tpl}/items/${id}`), 404, "not_found");
    expectError(await put(`${BASE}/${tpl}/items/${id}`, item({ metric_name: "gone" })), 404, "not_found");
  });

  it("404 for the items of an unknown template", async () => {
    const ghost = randomUUID();
    expectError(await get(`${BASE}/${ghost}/items`), 404, "not_found");
    expectError(await post(`${BASE}/${ghost}/items`, item()), 404, "not_found");
    expectError(await get(`${BASE}/${ghost}/items/${randomUUID()}`), 404, "not_found");
  });

  it("409 metric_name_taken for a second item with the same metric name", async () => {
    await createItem(tpl, item({ metric_name: "unique_metric" }));
    expectError(await post(`${BASE}/${tpl}/items`, item({ metric_name: "unique_metric", collection: "table" })), 409, "metric_name_taken");
  });

  it.each(["if_in_octets", "if_hc_out_octets", "if_in_bps", "cpu_load_pct", "reachable", "sys_uptime_secs"])(
    "400 reserved_metric_name for %s",
    async (name) => {
      expectError(await post(`${BASE}/${tpl}/items`, item({ metric_name: name })), 400, "reserved_metric_name");
    },
  );

  it.each([
    ["metric name with upper case", item({ metric_name: "UpsLoad" })],
    ["metric name starting with a digit", item({ metric_name: "1load" })],
    ["metric name with a dash", item({ metric_name: "ups-load" })],
    ["metric name too long", item({ metric_name: "m".repeat(64) })],
    ["oid with letters", item({ oid: "1.3.six.1" })],
    ["oid with one component", item({ oid: "1" })],
    ["oid with a trailing dot", item({ oid: "1.3.6." })],
    ["oid component above 2^32-1", item({ oid: "1.3.6.4294967296" })],
    ["unknown collection", item({ collection: "walk" })],
    ["unknown metric kind", item({ metric_kind: "rate" })],
    ["enabled not a boolean", item({ enabled: "yes" })],
    ["unknown field", item({ interval: 5 })],
    ["missing oid", { collection: "scalar", metric_kind: "gauge", metric_name: "x" }],
  ])("400 validation_failed: %s", async (_label, body) => {
    expectError(await post(`${BASE}/${tpl}/items`, body), 400, "validation_failed");
  });
});

/** A profile in inventory (a fixture, by raw SQL as the tests do). */
async function newProfile(parentId: string | null = null): Promise<string> {
  const rows = await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name, parent_id) VALUES ($1, $2) RETURNING id", [
    `p-${randomUUID()}`,
    parentId,
  ]);
  return rows[0].id;
}

describe("profiles use templates", () => {
  it("attaches and detaches (idempotent), lists a profile's templates, refuses to delete a template in use", async () => {
    const profile = await newProfile();
    const tpl = await createTemplate({ name: "attach me" });
    const path = `/api/v1/profiles/${profile}/collection-templates/${tpl}`;
    const res = await put(path, {}, operator);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await put(path, {}, operator)).status).toBe(200);
    expect((await get(`${BASE}/${tpl}`)).body.profile_ids).toEqual([profile]);
    const mine = await get(`/api/v1/profiles/${profile}/collection-templates`, viewer);
    expect(mine.status).toBe(200);
    expect((mine.body as { id: string }[]).map((t) => t.id)).toEqual([tpl]);

    expectError(await del(`${BASE}/${tpl}`), 409, "template_in_use");
    expect((await del(path, operator)).status).toBe(204);
    expect((await del(path, operator)).status).toBe(204);
    expect((await get(`/api/v1/profiles/${profile}/collection-templates`)).body).toEqual([]);
    expect((await del(`${BASE}/${tpl}`)).status).toBe(204);
  });

  it("404 attaching an unknown template or to a profile inventory does not have, 400 on ids that are not UUIDs, 401 without a token", async () => {
    expectError(await put(`/api/v1/profiles/${await newProfile()}/collection-templates/${randomUUID()}`, {}), 404, "not_found");
    const tpl = await createTemplate({ name: `orphan-${randomUUID()}` });
    expectError(await put(`/api/v1/profiles/${randomUUID()}/collection-templates/${tpl}`, {}), 404, "not_found");
    expectError(await del(`/api/v1/profiles/${randomUUID()}/collection-templates/${randomUUID()}`), 404, "not_found");
    expectError(await put(`/api/v1/profiles/cisco/collection-templates/${randomUUID()}`, {}), 400, "validation_failed");
    expectError(await get(`/api/v1/profiles/cisco/collection-templates`), 400, "validation_failed");
    expectError(await k.http.put(`/api/v1/profiles/${randomUUID()}/collection-templates/${randomUUID()}`), 401, "unauthorized");
  });

  it("templatesForProfile gives the enabled items of the profile's templates, a metric name once", async () => {
    const profile = await newProfile();
    const t1 = await createTemplate({ name: "aaa first" });
    const t2 = await createTemplate({ name: "bbb second" });
    const g = await createItem(t1, item({ metric_name: "shared_name", oid: "1.3.6.1.4.1.1.1.0" }));
    await createItem(t1, item({ metric_name: "off_item", oid: "1.3.6.1.4.1.1.2.0", enabled: false }));
    const c = await createItem(t1, { collection: "table", metric_kind: "counter", metric_name: "rx_frames", oid: "1.3.6.1.4.1.1.3" });
    await createItem(t2, item({ metric_name: "shared_name", oid: "1.3.6.1.4.1.2.1.0" }));
    const t2only = await createItem(t2, item({ metric_name: "temp_c", oid: "1.3.6.1.4.1.2.2.0" }));
    await put(`/api/v1/profiles/${profile}/collection-templates/${t1}`, {});
    await put(`/api/v1/profiles/${profile}/collection-templates/${t2}`, {});

    const service = k.kernel.context("polling")!.get(CollectionTemplateService);
    const items = await service.templatesForProfile(profile);
    expect(items).toEqual([
      { id: c, metric_name: "rx_frames", metric_kind: "counter", oid: "1.3.6.1.4.1.1.3", collection: "table" },
      { id: g, metric_name: "shared_name", metric_kind: "gauge", oid: "1.3.6.1.4.1.1.1.0", collection: "scalar" },
      { id: t2only, metric_name: "temp_c", metric_kind: "gauge", oid: "1.3.6.1.4.1.2.2.0", collection: "scalar" },
    ]);
    expect(await service.templatesForProfile(randomUUID())).toEqual([]);
    const many = await service.templatesForProfiles([profile, randomUUID()]);
    expect(many.get(profile)).toHaveLength(3);
  });

  it("inherits the templates of ancestor profiles (the nearest wins a metric name) and forgets a deleted profile's links", async () => {
    const root = await newProfile();
    const child = await newProfile(root);
    const rootTpl = await createTemplate({ name: `root-${randomUUID()}` });
    const childTpl = await createTemplate({ name: `child-${randomUUID()}` });
    await createItem(rootTpl, item({ metric_name: "fan_rpm", oid: "1.3.6.1.4.1.9.1.0" }));
    const rootTemp = await createItem(rootTpl, item({ metric_name: "temp_c", oid: "1.3.6.1.4.1.9.2.0" }));
    const childFan = await createItem(childTpl, item({ metric_name: "fan_rpm", oid: "1.3.6.1.4.1.9.3.0" }));
    expect((await put(`/api/v1/profiles/${root}/collection-templates/${rootTpl}`, {})).status).toBe(200);
    expect((await put(`/api/v1/profiles/${child}/collection-templates/${childTpl}`, {})).status).toBe(200);

    const service = k.kernel.context("polling")!.get(CollectionTemplateService);
    const items = await service.templatesForProfile(child);
    expect(items.map((i) => i.id).sort()).toEqual([childFan, rootTemp].sort());
    expect((await service.templatesForProfile(root)).map((i) => i.metric_name).sort()).toEqual(["fan_rpm", "temp_c"]);

    await rawQuery(db, "UPDATE inventory.profiles SET parent_id = NULL WHERE id = $1", [child]);
    await rawQuery(db, "DELETE FROM inventory.profiles WHERE id = $1", [root]);
    expect((await service.templatesForProfile(child)).map((i) => i.id)).toEqual([childFan]);
    expect(await service.templatesForProfile(root)).toEqual([]);
  });
});
