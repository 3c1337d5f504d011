import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Response } from "supertest";
import { Secrets, SecretKeyError } from "../../core/secrets/Secrets.js";
import { fixtureWidgetsPlugin } from "../fixtures/plugins/widgets/index.js";
import { rawQuery } from "../support/db.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { expectEnvelope } from "../support/assertions.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const SEALED = /^sealed:v1:[A-Za-z0-9+/]+=*$/;

/** Forms of a plaintext that would betray it in a text: itself, hex, base64. */
function leaks(plaintext: string): string[] {
  const b = Buffer.from(plaintext, "utf8");
  return [plaintext, b.toString("hex"), b.toString("base64").replace(/=+$/, "")];
}

function expectNoLeak(texts: string[], plaintext: string): void {
  for (const text of texts) for (const form of leaks(plaintext)) expect(text).not.toContain(form);
}

async function sealedOf(k: TestKernel, id: string): Promise<string | null> {
  const rows = await rawQuery<{ secret_sealed: string | null }>(k.databaseUrl!, "SELECT secret_sealed FROM fixture_widgets.widgets WHERE id = $1", [id]);
  expect(rows).toHaveLength(1);
  return rows[0].secret_sealed;
}

describe("secrets at rest, with a key file", () => {
  let k: TestKernel;
  const plaintext = `snmp-community-${randomBytes(12).toString("hex")}`;
  const responses: Response[] = [];
  let id: string;
  let plainId: string;

  beforeAll(async () => {
    k = await startTestKernel({ plugins: [fixtureWidgetsPlugin] });
    const created = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name: "router-1", secret: plaintext });
    responses.push(created);
    expect(created.status).toBe(201);
    id = created.body.id;
    const plain = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name: "router-2" });
    expect(plain.status).toBe(201);
    plainId = plain.body.id;
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("uses no NMS_SECRET_KEY here", () => {
    expect(k.kernel.config.secretKey).toBeNull();
  });

  it("creates <dataDir>/secret.key with mode 0600 holding a 32-byte key", () => {
    const file = join(k.dataDir, "secret.key");
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64")).toHaveLength(32);
  });

  it("stores the secret sealed (read raw), openable only with that key file", async () => {
    const sealed = await sealedOf(k, id);
    expect(sealed).toMatch(SEALED);
    expectNoLeak([sealed!], plaintext);
    expect(Secrets.fromConfig(null, k.dataDir).unseal(sealed!)).toBe(plaintext);
    expect(() => Secrets.fromConfig(randomBytes(32).toString("hex"), k.dataDir).unseal(sealed!)).toThrow(SecretKeyError);
    expect(await sealedOf(k, plainId)).toBeNull();
  });

  it("seals the same secret differently each time", async () => {
    const again = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name: "router-1b", secret: plaintext });
    responses.push(again);
    expect(again.status).toBe(201);
    const [a, b] = [await sealedOf(k, id), await sealedOf(k, again.body.id)];
    expect(a).not.toBe(b);
  });

  it("never answers the secret: only has_secret", async () => {
    const list = await k.http.get("/api/v1/widgets").set(bearer(k.adminToken));
    const one = await k.http.get(`/api/v1/widgets/${id}`).set(bearer(k.adminToken));
    const other = await k.http.get(`/api/v1/widgets/${plainId}`).set(bearer(k.adminToken));
    responses.push(list, one, other);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ id, name: "router-1", folder_id: null, has_secret: true });
    expect(other.body).toEqual({ id: plainId, name: "router-2", folder_id: null, has_secret: false });
    expect(list.body).toContainEqual({ id, name: "router-1", folder_id: null, has_secret: true });
    for (const w of list.body as Record<string, unknown>[]) expect(Object.keys(w).sort()).toEqual(["folder_id", "has_secret", "id", "name"]);
    const sealed = (await sealedOf(k, id))!;
    for (const res of responses) {
      expectNoLeak([res.text, JSON.stringify(res.headers)], plaintext);
      expect(res.text).not.toContain(sealed);
      expect(res.text).not.toContain("sealed:v1:");
    }
  });

  it("keeps the secret out of a refused request's answer", async () => {
    const res = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name: "", secret: plaintext });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "validation_failed");
    expectNoLeak([res.text], plaintext);
    const tooLong = `${plaintext}${"x".repeat(200)}`;
    const long = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name: "router-3", secret: tooLong });
    expect(long.status).toBe(400);
    expectNoLeak([long.text], plaintext);
  });

  it("never writes the secret (or its sealed form) to the log", async () => {
    expect(k.logs.length).toBeGreaterThan(0);
    expect(k.logs.some((l) => l.includes("/api/v1/widgets"))).toBe(true);
    const sealed = (await sealedOf(k, id))!;
    expectNoLeak(k.logs, plaintext);
    expectNoLeak(k.printed, plaintext);
    for (const line of k.logs) expect(line).not.toContain(sealed);
  });
});

describe("secrets at rest, with NMS_SECRET_KEY", () => {
  let k: TestKernel;
  const key = randomBytes(32).toString("hex");
  const plaintext = `api-key-${randomBytes(12).toString("hex")}`;

  beforeAll(async () => {
    k = await startTestKernel({ plugins: [fixtureWidgetsPlugin], env: { NMS_SECRET_KEY: key } });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("creates no key file", () => {
    expect(k.kernel.config.secretKey).toBe(key);
    expect(existsSync(join(k.dataDir, "secret.key"))).toBe(false);
  });

  it("seals with that key", async () => {
    const res = await k.http.post("/api/v1/widgets").set(bearer(k.adminToken)).send({ name: "nc", secret: plaintext });
    expect(res.status).toBe(201);
    const sealed = (await sealedOf(k, res.body.id))!;
    expect(sealed).toMatch(SEALED);
    expectNoLeak([sealed, res.text, ...k.logs], plaintext);
    const elsewhere = mkdtempSync(join(tmpdir(), "nms-secrets-"));
    expect(Secrets.fromConfig(key, elsewhere).unseal(sealed)).toBe(plaintext);
    expect(Secrets.fromConfig(key.toUpperCase(), elsewhere).unseal(sealed)).toBe(plaintext);
    expect(Secrets.fromConfig(Buffer.from(key, "hex").toString("base64"), elsewhere).unseal(sealed)).toBe(plaintext);
    expect(() => Secrets.fromConfig(null, elsewhere).unseal(sealed)).toThrow(SecretKeyError);
    expect(existsSync(join(k.dataDir, "secret.key"))).toBe(false);
  });
});

describe("Secrets (unit)", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "nms-secrets-"));
  const key = randomBytes(32).toString("hex");

  it("round-trips seal and unseal, including empty and non-ASCII text", () => {
    const s = Secrets.fromConfig(key, dir());
    for (const text of ["hunter2", "", "pässwörd ✓ 🔐", "x".repeat(10_000)]) {
      const sealed = s.seal(text);
      expect(Secrets.isSealed(sealed)).toBe(true);
      expect(sealed).toMatch(SEALED);
      if (text) expect(sealed).not.toContain(text);
      expect(s.unseal(sealed)).toBe(text);
    }
  });

  it("uses a fresh IV each time", () => {
    const s = Secrets.fromConfig(key, dir());
    const seals = new Set(Array.from({ length: 20 }, () => s.seal("same")));
    expect(seals.size).toBe(20);
  });

  it("refuses a tampered ciphertext, tag or IV", () => {
    const s = Secrets.fromConfig(key, dir());
    const sealed = s.seal("a secret worth protecting");
    const raw = Buffer.from(sealed.slice("sealed:v1:".length), "base64");
    // IV is bytes 0-11, the GCM tag 12-27, the ciphertext after.
    for (const at of [0, 11, 12, 27, 28, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[at] ^= 0x01;
      expect(() => s.unseal(`sealed:v1:${bad.toString("base64")}`)).toThrow(SecretKeyError);
    }
    expect(() => s.unseal(`sealed:v1:${raw.subarray(0, raw.length - 1).toString("base64")}`)).toThrow(SecretKeyError);
    expect(() => s.unseal(`sealed:v1:${raw.subarray(0, 20).toString("base64")}`)).toThrow(SecretKeyError);
    expect(() => s.unseal("sealed:v1:")).toThrow(SecretKeyError);
    expect(s.unseal(sealed)).toBe("a secret worth protecting");
  });

  it("refuses a value sealed with another key, naming the key as the likely cause", () => {
    const sealed = Secrets.fromConfig(key, dir()).seal("mine");
    const other = Secrets.fromConfig(randomBytes(32).toString("hex"), dir());
    expect(() => other.unseal(sealed)).toThrow(SecretKeyError);
    expect(() => other.unseal(sealed)).toThrow(/key/);
    expect(() => other.unseal(sealed)).not.toThrow(/mine/);
  });

  it("refuses to unseal what is not sealed", () => {
    const s = Secrets.fromConfig(key, dir());
    expect(Secrets.isSealed("plain")).toBe(false);
    expect(Secrets.isSealed(42)).toBe(false);
    expect(() => s.unseal("plain text")).toThrow(SecretKeyError);
  });

  it("refuses a key that is not 32 bytes", () => {
    for (const bad of ["abc", randomBytes(16).toString("hex"), randomBytes(31).toString("base64"), randomBytes(33).toString("base64")]) {
      expect(() => Secrets.fromConfig(bad, dir())).toThrow(SecretKeyError);
    }
  });

  it("creates the key file once (mode 0600) and reuses it, restoring its mode", () => {
    const d = join(dir(), "nested", "data");
    const first = Secrets.fromConfig(null, d);
    const file = join(d, "secret.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const content = readFileSync(file, "utf8");
    const sealed = first.seal("kept across restarts");
    chmodSync(file, 0o644);
    const second = Secrets.fromConfig(null, d);
    expect(readFileSync(file, "utf8")).toBe(content);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(second.unseal(sealed)).toBe("kept across restarts");
  });

  it("refuses a key file that holds no 32-byte key", () => {
    const d = dir();
    writeFileSync(join(d, "secret.key"), "too short\n", { mode: 0o600 });
    expect(() => Secrets.fromConfig(null, d)).toThrow(SecretKeyError);
  });
});
