import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { createTestDatabase, rawQuery } from "../support/db.js";
import { ROOT } from "../support/spawnKernel.js";

const CLI = join(ROOT, "dist/core/cli/main.js");

function nms(databaseUrl: string | null, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else env.NMS_MODE = "skeleton";
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env, encoding: "utf8", timeout: 30000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

let db: string;
beforeAll(async () => {
  db = await createTestDatabase();
});

describe("nms CLI (offline administration)", () => {
  it("creates an account with a generated password printed once, stored as scrypt", async () => {
    const r = nms(db, "accounts", "create", "--username", "carol", "--role", "operator");
    expect(r.code).toBe(0);
    const password = /password: (\S+)/.exec(r.out)?.[1];
    expect(password).toBeTruthy();
    const rows = await rawQuery<{ role: string; password_hash: string }>(db, "SELECT role, password_hash FROM core.accounts WHERE username = 'carol'");
    expect(rows).toHaveLength(1);
    expect(rows[0].role).toBe("operator");
    expect(rows[0].password_hash).toMatch(/^scrypt\$/);
    expect(rows[0].password_hash).not.toContain(password!);
    expect(nms(db, "accounts", "list").out).toContain("carol  operator");
  });

  it("creates a scoped API token printed once and stored hashed", async () => {
    const folder = "6f1c1d2e-1111-4222-8333-444455556666";
    const r = nms(db, "tokens", "create", "--name", "ci-reader", "--role", "viewer", "--scope", JSON.stringify({ folders: [folder] }));
    expect(r.code).toBe(0);
    const token = /token: (\S+)/.exec(r.out)?.[1];
    expect(token).toMatch(/^nmst_/);
    const rows = await rawQuery<{ scope: unknown; token_hash: Buffer }>(db, "SELECT scope, token_hash FROM core.api_tokens WHERE name = 'ci-reader'");
    expect(rows[0].scope).toEqual({ folders: [folder] });
    expect(rows[0].token_hash.toString("utf8")).not.toContain(token!);
    expect(nms(db, "tokens", "list").out).toContain("ci-reader  viewer");
  });

  it("refuses bad input with a clear message and exit code 2", () => {
    const dup = nms(db, "accounts", "create", "--username", "CAROL", "--role", "viewer", "--password", "long-enough-1");
    expect(dup.code).toBe(2);
    expect(dup.err).toContain("username exists");
    const badRole = nms(db, "tokens", "create", "--name", "x", "--role", "root");
    expect(badRole.code).toBe(2);
    expect(badRole.err).toContain("--role must be one of");
    const badScope = nms(db, "tokens", "create", "--name", "x", "--role", "viewer", "--scope", '{"folders":["nope"]}');
    expect(badScope.code).toBe(2);
    expect(badScope.err).toContain("scope");
    const unknown = nms(db, "frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("unknown command");
  });

  it("refuses to run in skeleton mode (there is no store)", () => {
    const r = nms(null, "accounts", "list");
    expect(r.code).toBe(2);
    expect(r.err).toContain("skeleton");
  });
});
