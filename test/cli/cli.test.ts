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

  it("updates an account's role, scope and password, deletes it, and revokes a token", async () => {
    expect(nms(db, "accounts", "create", "--username", "hank", "--role", "viewer", "--password", "hank-password-1").code).toBe(0);
    const folder = "6f1c1d2e-1111-4222-8333-444455556666";
    const up = nms(db, "accounts", "update", "HANK", "--role", "operator", "--scope", JSON.stringify({ folders: [folder] }), "--password", "hank-password-2");
    expect(up.err).toBe("");
    expect(up.code).toBe(0);
    expect(up.out).toContain("updated account hank (operator)");
    const rows = await rawQuery<{ role: string; scope: unknown }>(db, "SELECT role, scope FROM core.accounts WHERE username = 'hank'");
    expect(rows[0]).toEqual({ role: "operator", scope: { folders: [folder] } });
    // Only what is given changes.
    expect(nms(db, "accounts", "update", "hank", "--role", "admin").code).toBe(0);
    expect((await rawQuery(db, "SELECT role, scope FROM core.accounts WHERE username = 'hank'"))[0]).toEqual({ role: "admin", scope: { folders: [folder] } });
    expect(nms(db, "accounts", "update", "hank").code).toBe(2);
    expect(nms(db, "accounts", "update", "nobody", "--role", "viewer").err).toContain('no account named "nobody"');
    expect(nms(db, "accounts", "delete", "hank").out).toContain("deleted account hank");
    expect(await rawQuery(db, "SELECT 1 FROM core.accounts WHERE username = 'hank'")).toEqual([]);

    const token = JSON.parse(nms(db, "tokens", "create", "--name", "to-revoke", "--role", "viewer", "--json").out) as { id: string };
    const revoked = nms(db, "tokens", "revoke", token.id, "--json");
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.out)).toEqual({ id: token.id, revoked: true });
    expect(await rawQuery(db, "SELECT 1 FROM core.api_tokens WHERE id = $1", [token.id])).toEqual([]);
    expect(nms(db, "tokens", "revoke", "not-an-id").code).toBe(2);
  });

  it("refuses to run in skeleton mode (there is no store)", () => {
    const r = nms(null, "accounts", "list");
    expect(r.code).toBe(2);
    expect(r.err).toContain("skeleton");
  });
});

describe("nms CLI: help, errors that name the bad value, JSON", () => {
  it("answers --help on every command and subcommand with usage and exit 0; the top level lists the plugins' commands", () => {
    const top = nms(null, "--help");
    expect(top.code).toBe(0);
    for (const name of ["accounts", "tokens", "plugin", "bundle", "sweep", "report", "api", "poller", "flows"])
      expect(top.out).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    expect(top.out).toContain("call the REST API");
    for (const args of [
      ["accounts", "--help"],
      ["accounts", "create", "--help"],
      ["accounts", "list", "--help"],
      ["accounts", "update", "--help"],
      ["accounts", "delete", "--help"],
      ["tokens", "--help"],
      ["tokens", "create", "--help"],
      ["tokens", "list", "--help"],
      ["tokens", "revoke", "--help"],
      ["plugin", "new", "--help"],
      ["bundle", "export", "--help"],
      ["bundle", "import", "--help"],
      ["sweep", "--help"],
      ["report", "run", "--help"],
      ["help", "tokens"],
    ]) {
      const r = nms(null, ...args);
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: "" });
      expect(r.out).toMatch(/usage/i);
    }
    for (const name of ["api", "poller", "flows"]) {
      const r = nms(null, name, "--help");
      expect({ name, code: r.code }).toEqual({ name, code: 0 });
      expect(r.out).toMatch(new RegExp(`usage:[\\s\\S]*nms ${name}`, "i"));
    }
    const helpApi = nms(null, "help", "api");
    expect(helpApi.code).toBe(0);
    expect(helpApi.out).toContain("usage: nms api <METHOD> <route> [json]");
    expect(nms(null, "tokens", "create", "--help").out).toContain("--expires-at");
  });

  it("names the bad value and exits 2", () => {
    const role = nms(db, "accounts", "create", "--username", "x", "--role", "superuser");
    expect(role.code).toBe(2);
    expect(role.err).toContain('"superuser" is not one of them');
    expect(role.err).toContain("viewer, operator, admin");
    const when = nms(db, "tokens", "create", "--name", "x", "--role", "viewer", "--expires-at", "tomorrow");
    expect(when.code).toBe(2);
    expect(when.err).toContain('"tomorrow" is not an RFC 3339 timestamp');
    const past = nms(db, "tokens", "create", "--name", "x", "--role", "viewer", "--expires-at", "2001-02-03T04:05:06Z");
    expect(past.code).toBe(2);
    expect(past.err).toContain("2001-02-03T04:05:06Z is in the past");
    const method = nms(null, "api", "FETCH", "/nodes");
    expect(method.code).toBe(2);
    expect(method.err).toContain('"FETCH" is not a method: use GET, POST, PUT, PATCH, DELETE');
    const unknown = nms(null, "frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("unknown command 'frobnicate'");
    const sub = nms(null, "tokens", "rotate");
    expect(sub.code).toBe(2);
    expect(sub.err).toContain("unknown command 'rotate'");
    const option = nms(null, "accounts", "list", "--colour");
    expect(option.code).toBe(2);
    expect(option.err).toContain("unknown option '--colour'");
    const format = nms(null, "report", "run", "x", "--format", "docx", "--url", "http://127.0.0.1:9");
    expect(format.code).toBe(2);
    expect(format.err).toContain('"docx" is not one of them');
    expect(nms(null, "accounts").code).toBe(2);
  });

  it("prints JSON only on stdout with --json, offline too (the secret shown once included)", async () => {
    const made = nms(db, "accounts", "create", "--username", "hugo", "--role", "viewer", "--json");
    expect(made.code).toBe(0);
    const account = JSON.parse(made.out) as { id: string; username: string; password: string };
    expect(account).toMatchObject({ username: "hugo", role: "viewer", scope: "All" });
    expect(account.password.length).toBeGreaterThanOrEqual(8);
    const given = JSON.parse(nms(db, "accounts", "create", "--username", "ida", "--role", "viewer", "--password", "ida-password-1", "--json").out);
    expect(given).not.toHaveProperty("password");
    const accounts = JSON.parse(nms(db, "accounts", "list", "--json").out) as { id: string; username: string }[];
    expect(accounts.find((a) => a.username === "hugo")?.id).toBe(account.id);
    const token = nms(db, "tokens", "create", "--name", "json-reader", "--role", "viewer", "--json");
    expect(token.code).toBe(0);
    const created = JSON.parse(token.out) as { id: string; token: string };
    expect(created.token).toMatch(/^nmst_/);
    const tokens = JSON.parse(nms(db, "tokens", "list", "--json").out) as { id: string; name: string; expires_at: null }[];
    expect(tokens.find((t) => t.id === created.id)).toMatchObject({ name: "json-reader", expires_at: null });
    expect(JSON.stringify(tokens)).not.toContain(created.token);
  });
});

describe("nms bundle through the CLI", () => {
  it("exports to stdout as clean JSON with nothing on stderr when stderr is no terminal (no progress bar)", () => {
    const r = nms(db, "bundle", "export", "-");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ format: expect.any(String), version: expect.any(Number) });
    const bad = nms(db, "bundle", "import", "-", "--mode", "upsert");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('"upsert"');
  }, 60000);
});
