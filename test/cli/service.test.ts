/**
 * `nms accounts` and `nms tokens` through a running service's REST API (--url / NMS_URL): the service is a real process
 * on its embedded PostgreSQL, so the offline path refuses its data dir ("in use") and only the API path can work.
 */
import { rmSync } from "node:fs";
import { spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { nmsAsync } from "./support.js";

const BOOTSTRAP = "nmsb_cli_service_test_bootstrap_token_0123456789";
let k: SpawnedKernel;

beforeAll(async () => {
  k = await spawnKernel({ env: { NMS_BOOTSTRAP_TOKEN: BOOTSTRAP }, timeoutMs: 90000 });
}, 120000);
afterAll(async () => {
  await k?.stop();
  if (k) rmSync(k.dataDir, { recursive: true, force: true });
});

describe("nms accounts and tokens against a running service", () => {
  it("offline refuses the data dir the service runs on", async () => {
    const r = await nmsAsync(["accounts", "list"], { NMS_DATA_DIR: k.dataDir });
    expect(r.code).toBe(1);
    expect(r.err).toContain("in use");
  });

  it("creates and lists accounts and tokens through the API with a token, as text and as JSON", async () => {
    const env = { NMS_DATA_DIR: k.dataDir, NMS_TOKEN: BOOTSTRAP };
    const made = await nmsAsync(["accounts", "create", "--url", k.url, "--username", "dora", "--role", "admin", "--password", "dora-password-1"], env);
    expect(made.err).toBe("");
    expect(made.code).toBe(0);
    expect(made.out).toMatch(/^created account dora \(admin\) id=[0-9a-f-]{36}\n$/);

    const generated = await nmsAsync(["accounts", "create", "--url", k.url, "--username", "erin", "--role", "viewer", "--json"], env);
    expect(generated.code).toBe(0);
    const erin = JSON.parse(generated.out) as { id: string; username: string; role: string; scope: unknown; password: string };
    expect(erin).toMatchObject({ username: "erin", role: "viewer", scope: "All" });
    expect(erin.password.length).toBeGreaterThanOrEqual(8);

    const listed = await nmsAsync(["accounts", "list", "--json"], { ...env, NMS_URL: k.url });
    expect(listed.code).toBe(0);
    const names = (JSON.parse(listed.out) as { username: string }[]).map((a) => a.username);
    expect(names).toEqual(expect.arrayContaining(["dora", "erin"]));

    const dup = await nmsAsync(["accounts", "create", "--url", k.url, "--username", "DORA", "--role", "viewer", "--password", "long-enough-1"], env);
    expect(dup.code).toBe(2);
    expect(dup.err).toContain("username exists");

    const token = await nmsAsync(
      ["tokens", "create", "--url", k.url, "--name", "ci", "--role", "operator", "--expires-at", "2099-01-01T00:00:00Z", "--json"],
      env,
    );
    expect(token.code).toBe(0);
    const created = JSON.parse(token.out) as { id: string; token: string; name: string; expires_at: string };
    expect(created).toMatchObject({ name: "ci", expires_at: "2099-01-01T00:00:00Z" });
    expect(created.token).toMatch(/^nmst_/);
    const tokens = await nmsAsync(["tokens", "list", "--url", k.url], env);
    expect(tokens.code).toBe(0);
    expect(tokens.out).toContain(`${created.id}  ci  operator  "All"  expires=2099-01-01T00:00:00`);
    expect(tokens.out).not.toContain(created.token);
  }, 60000);

  it("logs in with a username and password instead of a token; a wrong password exits 1", async () => {
    const env = { NMS_DATA_DIR: k.dataDir };
    const made = await nmsAsync(["accounts", "create", "--url", k.url, "--username", "fay", "--role", "admin", "--password", "fay-password-1"], {
      ...env,
      NMS_TOKEN: BOOTSTRAP,
    });
    expect(made.code).toBe(0);
    const listed = await nmsAsync(["tokens", "list", "--url", k.url, "--username", "fay", "--password", "fay-password-1", "--json"], env);
    expect(listed.err).toBe("");
    expect(listed.code).toBe(0);
    expect(Array.isArray(JSON.parse(listed.out))).toBe(true);
    const viaLogin = await nmsAsync(
      [
        "accounts",
        "create",
        "--url",
        k.url,
        "--login-username",
        "fay",
        "--login-password",
        "fay-password-1",
        "--username",
        "gus",
        "--role",
        "viewer",
        "--json",
      ],
      env,
    );
    expect(viaLogin.code).toBe(0);
    expect(JSON.parse(viaLogin.out)).toMatchObject({ username: "gus" });
    const wrong = await nmsAsync(["accounts", "list", "--url", k.url, "--username", "fay", "--password", "not-her-password"], env);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("401");
  }, 60000);

  it("updates, deletes and revokes through the API while the service runs (offline would find the data dir in use)", async () => {
    const env = { NMS_DATA_DIR: k.dataDir, NMS_TOKEN: BOOTSTRAP, NMS_URL: k.url };
    expect((await nmsAsync(["accounts", "create", "--username", "ivy", "--role", "viewer", "--password", "ivy-password-1"], env)).code).toBe(0);
    const up = await nmsAsync(["accounts", "update", "ivy", "--role", "operator", "--password", "ivy-password-2", "--json"], env);
    expect(up.err).toBe("");
    expect(up.code).toBe(0);
    expect(JSON.parse(up.out)).toMatchObject({ username: "ivy", role: "operator", scope: "All", password_changed: true });
    const login = await fetch(`${k.url}/api/v1/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "ivy", password: "ivy-password-2" }),
    });
    expect(login.status).toBe(201);

    const created = JSON.parse((await nmsAsync(["tokens", "create", "--name", "short-lived", "--role", "viewer", "--json"], env)).out) as {
      id: string;
      token: string;
    };
    const asToken = () => fetch(`${k.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${created.token}` } });
    expect((await asToken()).status).toBe(200);
    const revoked = await nmsAsync(["tokens", "revoke", created.id], env);
    expect(revoked.code).toBe(0);
    expect(revoked.out).toBe(`revoked token ${created.id}\n`);
    expect((await asToken()).status).toBe(401);
    const again = await nmsAsync(["tokens", "revoke", created.id], env);
    expect(again.code).toBe(2);
    expect(again.err).toContain("404");

    expect((await nmsAsync(["accounts", "delete", "ivy"], env)).out).toMatch(/^deleted account ivy id=[0-9a-f-]{36}\n$/);
    const names = (JSON.parse((await nmsAsync(["accounts", "list", "--json"], env)).out) as { username: string }[]).map((a) => a.username);
    expect(names).not.toContain("ivy");
    const offline = await nmsAsync(["accounts", "delete", "dora"], { NMS_DATA_DIR: k.dataDir });
    expect(offline.code).toBe(1);
    expect(offline.err).toContain("in use");
  }, 60000);

  it("says what is missing: a URL without a token or login, a token without a URL", async () => {
    const noAuth = await nmsAsync(["tokens", "list", "--url", k.url], { NMS_DATA_DIR: k.dataDir });
    expect(noAuth.code).toBe(2);
    expect(noAuth.err).toContain("needs a token");
    const noUrl = await nmsAsync(["tokens", "list", "--token", BOOTSTRAP], { NMS_DATA_DIR: k.dataDir });
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain("--url");
  });
});
