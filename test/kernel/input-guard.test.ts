/**
 * The kernel's boundary on request text (core/http/inputGuard.ts) and the one map from PostgreSQL
 * errors to envelopes (core/store/pgErrors.ts): NUL and lone surrogates answer 400 before any handler,
 * on the routes a fuzz found answering 500, and real PostgreSQL errors map to their 4xx/503 codes.
 */
import pg from "pg";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { checkJsonValue, hasForbiddenCharacters, MAX_JSON_DEPTH } from "../../core/http/inputGuard.js";
import { isStoreUnreachable, pgErrorEnvelope } from "../../core/store/pgErrors.js";
import { expectEnvelope } from "../support/assertions.js";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

describe("hasForbiddenCharacters / checkJsonValue", () => {
  it("finds NUL and unpaired surrogates, and lets paired ones and ordinary text through", () => {
    expect(hasForbiddenCharacters("router-1 ü 😀")).toBe(false);
    expect(hasForbiddenCharacters("a\u0000b")).toBe(true);
    expect(hasForbiddenCharacters("\ud800")).toBe(true);
    expect(hasForbiddenCharacters("x\udc00y")).toBe(true);
    expect(hasForbiddenCharacters("😀\ud83d")).toBe(true);
  });

  it("walks values and keys at any depth, and bounds the depth without recursion", () => {
    expect(checkJsonValue({ a: [{ b: "ok" }], c: 1, d: null })).toBeUndefined();
    expect(checkJsonValue({ a: [{ b: "no\u0000" }] })).toBe("invalid_characters");
    expect(checkJsonValue({ ["k\ud800"]: 1 })).toBe("invalid_characters");
    let deep: unknown = "leaf";
    for (let i = 0; i < 10000; i++) deep = [deep];
    expect(checkJsonValue(deep)).toBe("nesting_too_deep");
    let fits: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) fits = { x: fits };
    expect(checkJsonValue(fits)).toBeUndefined();
  });

  it("refuses numbers JSON.parse made infinite; a protocol route skips only the text check", () => {
    expect(checkJsonValue(JSON.parse('{"n":[1e400]}'))).toBe("value_out_of_range");
    expect(checkJsonValue(JSON.parse('{"n":-1e400}'))).toBe("value_out_of_range");
    expect(checkJsonValue({ n: 1e308, m: -0 })).toBeUndefined();
    expect(checkJsonValue({ t: "a\u0000" }, { characters: false })).toBeUndefined();
    expect(checkJsonValue({ n: Infinity }, { characters: false })).toBe("value_out_of_range");
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(checkJsonValue(deep, { characters: false })).toBe("nesting_too_deep");
  });
});

describe("the boundary on a running kernel", () => {
  let k: TestKernel;
  const auth = () => ({ Authorization: `Bearer ${k.adminToken}` });

  beforeAll(async () => {
    k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin], overrides: { pluginConfig: { polling: { embeddedPoller: false } } } });
  });
  afterAll(async () => {
    await k?.stop();
  });

  // The four operations the fuzz of issue 16 found answering 500 on a NUL in a string field.
  it.each([
    ["post", "/api/v1/node-groups", { name: "core\u0000net" }],
    ["post", "/api/v1/profiles", { name: "p\u0000" }],
    ["post", "/api/v1/collection-templates", { name: "t\u0000" }],
  ])("%s %s with a NUL answers 400 invalid_characters and writes nothing", async (method, path, body) => {
    const before = await k.http.get(path).set(auth());
    const res = await (k.http as unknown as Record<string, (p: string) => import("supertest").Test>)[method](path).set(auth()).send(body);
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "invalid_characters");
    const after = await k.http.get(path).set(auth());
    expect(after.status).toBe(200);
    expect(JSON.stringify(after.body)).toBe(JSON.stringify(before.body));
  });

  it("PUT /collection-templates/{id} with a lone surrogate answers 400 and keeps the stored name", async () => {
    const created = await k.http.post("/api/v1/collection-templates").set(auth()).send({ name: "edge-template" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // Sent as raw JSON text: "\ud800" is a valid JSON escape that decodes to an unpaired surrogate.
    const res = await k.http.put(`/api/v1/collection-templates/${id}`).set(auth()).set("Content-Type", "application/json").send('{"name":"bad\\ud800"}');
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "invalid_characters");
    const got = await k.http.get(`/api/v1/collection-templates/${id}`).set(auth());
    expect(got.body.name).toBe("edge-template");
  });

  it("refuses NUL in a query value, in a query key and in a path segment, and a malformed escape in the path", async () => {
    for (const url of ["/api/v1/nodes?q=a%00b", "/api/v1/nodes?a%00=1", "/api/v1/nodes/%00", "/api/v1/nodes/%ED%A0%80", "/api/v1/nodes/%ZZ"]) {
      const res = await k.http.get(url).set(auth());
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expectEnvelope(res.body, "invalid_characters");
    }
  });

  it("refuses a body nested deeper than the cap with nesting_too_deep", async () => {
    const res = await k.http
      .post("/api/v1/node-groups")
      .set(auth())
      .set("Content-Type", "application/json")
      .send(`{"name":"x","extra":${"[".repeat(5000)}${"]".repeat(5000)}}`);
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "nesting_too_deep");
  });

  it("answers 1e400 (infinite once parsed) with 400 value_out_of_range, storing nothing", async () => {
    const res = await k.http.post("/api/v1/node-groups").set(auth()).set("Content-Type", "application/json").send('{"name":"inf","sort_order":1e400}');
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "value_out_of_range");
    const list = await k.http.get("/api/v1/node-groups").set(auth());
    expect(JSON.stringify(list.body)).not.toContain('"inf"');
  });

  it("still accepts ordinary non-ASCII text", async () => {
    const res = await k.http.post("/api/v1/node-groups").set(auth()).send({ name: "Zürich 北京 😀" });
    expect(res.status).toBe(201);
  });
});

describe("pgErrorEnvelope on real PostgreSQL errors", () => {
  let url: string;
  const failure = async (sql: string, params: unknown[] = []): Promise<unknown> => {
    try {
      await rawQuery(url, sql, params);
    } catch (err) {
      return err;
    }
    throw new Error(`expected ${sql} to fail`);
  };

  beforeAll(async () => {
    url = await createTestDatabase();
    await rawQuery(
      url,
      `CREATE TABLE parent (id int PRIMARY KEY, name varchar(8) UNIQUE, n smallint, addr inet, CHECK (n IS NULL OR n >= 0));
       CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parent(id));
       INSERT INTO parent (id, name) VALUES (1, 'one'); INSERT INTO child VALUES (1, 1);`,
    );
  });

  it.each([
    ["SELECT $1::uuid", ["not-a-uuid"], 400, "invalid_value"],
    ["SELECT $1::inet", ["300.1.1.1"], 400, "invalid_value"],
    ["SELECT $1::timestamptz", ["yesterday-ish"], 400, "invalid_value"],
    ["INSERT INTO parent (id, n) VALUES (2, 99999)", [], 400, "value_out_of_range"],
    ["INSERT INTO parent (id, name) VALUES (3, 'much too long')", [], 400, "value_too_long"],
    ["INSERT INTO parent (id, name) VALUES (4, 'one')", [], 409, "already_exists"],
    ["INSERT INTO child VALUES (2, 42)", [], 400, "unknown_reference"],
    ["DELETE FROM parent WHERE id = 1", [], 409, "in_use"],
    ["INSERT INTO child (id) VALUES (3)", [], 400, "validation_failed"],
    ["INSERT INTO parent (id, n) VALUES (5, -1)", [], 400, "invalid_value"],
    ["SELECT 'a' ~ $1", ["("], 400, "invalid_regex"],
    ["SELECT $1::text", ["nul\u0000"], 400, "invalid_characters"],
    ["SET statement_timeout = 10; SELECT pg_sleep(1)", [], 503, "query_timeout"],
  ])("%s %j → %i %s", async (sql, params, status, code) => {
    const err = await failure(sql, params as unknown[]);
    expect(pgErrorEnvelope(err)).toMatchObject({ status, code });
  });

  it("leaves errors that are bugs (a missing table, a syntax error) to the 500 path", async () => {
    expect(pgErrorEnvelope(await failure("SELECT * FROM no_such_table"))).toBeUndefined();
    expect(pgErrorEnvelope(await failure("SELEC 1"))).toBeUndefined();
    expect(pgErrorEnvelope(new Error("plain bug"))).toBeUndefined();
  });

  it("answers 503 store_unavailable when the server refuses connections", async () => {
    const closed = new URL(url);
    closed.port = "1"; // nothing listens on port 1 of loopback
    const client = new pg.Client({ connectionString: closed.toString(), connectionTimeoutMillis: 2000 });
    const err = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreUnreachable(err)).toBe(true);
    expect(pgErrorEnvelope(err)).toMatchObject({ status: 503, code: "store_unavailable" });
  });
});
