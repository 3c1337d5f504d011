/**
 * `nms accounts create|list|update|delete` and `nms tokens create|list|revoke`: through a running service's REST API when a URL is given
 * (--url or NMS_URL), else offline on the configured store (the service must not run on that embedded data dir).
 */
import type { Command } from "commander";
import { AuthService, validateScope } from "../auth/AuthService.js";
import { ROLES, type Role, type Scope } from "../auth/Caller.js";
import type { AccountView, TokenView } from "../auth/models/AuthModels.js";
import { randomPassword } from "../auth/passwords.js";
import { loadConfig } from "../config/Config.js";
import { JsonLogger } from "../logging/Logger.js";
import { coreMigrations } from "../store/coreMigrations.js";
import { EmbeddedServer } from "../store/EmbeddedServer.js";
import { migratePlugin } from "../store/Migrator.js";
import { createPool, Store } from "../store/Store.js";
import { parseRfc3339 } from "../util/time.js";
import { CliUsageError, serviceUrl, withApi, type ApiConnection, type ConnectionOptions } from "./connection.js";

export function role(value: string | undefined): Role {
  const list = ROLES.join(", ");
  if (value === undefined) throw new CliUsageError(`--role is required: --role must be one of ${list}`);
  if (!(ROLES as readonly string[]).includes(value)) throw new CliUsageError(`--role must be one of ${list}; "${value}" is not one of them`);
  return value as Role;
}

export function scope(value: string | undefined): Scope {
  if (value === undefined || value === "All") return "All";
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new CliUsageError(`--scope: ${JSON.stringify(value)} is neither All nor JSON like {"folders":["<uuid>"]}`);
  }
  try {
    validateScope(parsed);
  } catch (err) {
    throw new CliUsageError(`--scope: ${(err as Error).message}`);
  }
  return parsed as Scope;
}

/** An RFC 3339 timestamp in the future, or null for none. */
export function expiresAt(value: string | undefined, now = Date.now()): string | null {
  if (value === undefined) return null;
  const parsed = parseRfc3339(value);
  if (!parsed) throw new CliUsageError(`--expires-at: "${value}" is not an RFC 3339 timestamp (e.g. 2030-01-31T12:00:00Z)`);
  if (parsed.ms <= now) throw new CliUsageError(`--expires-at: ${value} is in the past; a token must expire in the future`);
  return value;
}

async function withStore<T>(fn: (auth: AuthService) => Promise<T>): Promise<T> {
  const config = loadConfig();
  if (config.mode === "skeleton") throw new CliUsageError("skeleton mode has no store: accounts come only from NMS_BOOTSTRAP_TOKEN");
  const log = new JsonLogger("warn", "cli", (line) => process.stderr.write(line + "\n"));
  let embedded: EmbeddedServer | null = null;
  let url = config.databaseUrl;
  if (!url) {
    embedded = new EmbeddedServer(config.dataDir, log);
    url = (await embedded.start()).url;
  }
  const store = new Store(createPool(url, (err) => log.warn("database connection lost", { error: err.message }), 2));
  try {
    await migratePlugin(store, "core", coreMigrations, log);
    return await fn(new AuthService(store, config, log));
  } finally {
    await store.close();
    await embedded?.stop();
  }
}

/** What the commands do, on the store or through the API. */
interface Admin {
  createAccount(input: { username: string; password: string; role: Role; scope: Scope }): Promise<string>;
  listAccounts(): Promise<AccountView[]>;
  createToken(input: { name: string; role: Role; scope: Scope; expires_at: string | null }): Promise<{ id: string; token: string }>;
  listTokens(): Promise<TokenView[]>;
  /** Changes an account named by username: role, scope and password each only when given. Returns it as it was. */
  updateAccount(username: string, changes: { role?: Role; scope?: Scope; password?: string }): Promise<AccountView>;
  deleteAccount(username: string): Promise<AccountView>;
  revokeToken(id: string): Promise<void>;
}

/** The account of `username` (case-insensitive, as usernames are unique) in a list, or a usage error naming it. */
function accountNamed(list: AccountView[], username: string): AccountView {
  const found = list.find((a) => a.username.toLowerCase() === username.toLowerCase());
  if (!found) throw new CliUsageError(`no account named "${username}" (nms accounts list shows them)`);
  return found;
}

const merged = (a: AccountView, c: { role?: Role; scope?: Scope; password?: string }) => ({
  role: c.role ?? a.role,
  scope: c.scope ?? a.scope,
  ...(c.password !== undefined ? { password: c.password } : {}),
});

const PAGE = 1000;

function offline(): Admin {
  return {
    createAccount: (input) => withStore((auth) => auth.createAccount(input)),
    listAccounts: () =>
      withStore(async (auth) => {
        const all: AccountView[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await auth.listAccounts(PAGE, after);
          all.push(...page);
          if (page.length < PAGE) return all;
          after = page[page.length - 1].username;
        }
      }),
    createToken: (input) => withStore((auth) => auth.createToken(input)),
    listTokens: () =>
      withStore(async (auth) => {
        const all: TokenView[] = [];
        let before: { at: string; id: string } | undefined;
        for (;;) {
          const page = await auth.listTokens(PAGE, before);
          all.push(...page);
          if (page.length < PAGE) return all;
          const last = page[page.length - 1];
          before = { at: last.created_at, id: last.id };
        }
      }),
    updateAccount: (username, changes) =>
      withStore(async (auth) => {
        const account = accountNamed(await allAccountsOf((after) => auth.listAccounts(PAGE, after)), username);
        await auth.updateAccount(account.id, merged(account, changes));
        return account;
      }),
    deleteAccount: (username) =>
      withStore(async (auth) => {
        const account = accountNamed(await allAccountsOf((after) => auth.listAccounts(PAGE, after)), username);
        await auth.deleteAccount(account.id);
        return account;
      }),
    revokeToken: (id) => withStore((auth) => auth.deleteToken(id)),
  };
}

/** Every account, page by page (by username). */
async function allAccountsOf(page: (after?: string) => Promise<AccountView[]>): Promise<AccountView[]> {
  const all: AccountView[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await page(after);
    all.push(...rows);
    if (rows.length < PAGE) return all;
    after = rows[rows.length - 1].username;
  }
}

/** The same through the REST API (keyset pages as the routes document them). */
function viaApi(baseUrl: string, o: ConnectionOptions): Admin {
  const call = <T>(fn: (api: ApiConnection) => Promise<T>) => withApi(baseUrl, o, fn);
  return {
    createAccount: (input) => call(async (api) => (await api.json<{ id: string }>("POST", "/accounts", input)).id),
    listAccounts: () =>
      call(async (api) => {
        const all: AccountView[] = [];
        let after: string | undefined;
        for (;;) {
          const q = new URLSearchParams({ limit: String(PAGE), ...(after ? { after } : {}) });
          const page = await api.json<AccountView[]>("GET", `/accounts?${q}`);
          all.push(...page);
          if (page.length < PAGE) return all;
          after = page[page.length - 1].username;
        }
      }),
    createToken: (input) => call((api) => api.json<{ id: string; token: string }>("POST", "/tokens", input)),
    listTokens: () =>
      call(async (api) => {
        const all: TokenView[] = [];
        let before: { before: string; before_id: string } | undefined;
        for (;;) {
          const q = new URLSearchParams({ limit: String(PAGE), ...before });
          const page = await api.json<TokenView[]>("GET", `/tokens?${q}`);
          all.push(...page);
          if (page.length < PAGE) return all;
          const last = page[page.length - 1];
          before = { before: last.created_at, before_id: last.id };
        }
      }),
    updateAccount: (username, changes) =>
      call(async (api) => {
        const account = accountNamed(await allAccountsOf((after) => api.json<AccountView[]>("GET", `/accounts?${accountsQuery(after)}`)), username);
        await api.json("PUT", `/accounts/${account.id}`, merged(account, changes));
        return account;
      }),
    deleteAccount: (username) =>
      call(async (api) => {
        const account = accountNamed(await allAccountsOf((after) => api.json<AccountView[]>("GET", `/accounts?${accountsQuery(after)}`)), username);
        await api.json("DELETE", `/accounts/${account.id}`);
        return account;
      }),
    revokeToken: (id) => call(async (api) => void (await api.json("DELETE", `/tokens/${encodeURIComponent(id)}`))),
  };
}

const accountsQuery = (after?: string) => new URLSearchParams({ limit: String(PAGE), ...(after ? { after } : {}) });

interface ConnectionFlags {
  url?: string;
  token?: string;
  loginUsername?: string;
  loginPassword?: string;
}

/** The API (a URL given) or the store; a login or token without a URL is a mistake, not something to ignore. */
function admin(flags: ConnectionFlags, login: { username?: string; password?: string } = {}): Admin {
  const o: ConnectionOptions = {
    url: flags.url,
    token: flags.token,
    username: flags.loginUsername ?? login.username,
    password: flags.loginPassword ?? login.password,
  };
  const url = serviceUrl(o);
  if (url) return viaApi(url, o);
  if (flags.token || o.username || o.password) throw new CliUsageError("--token and a login are for a running service: give its URL with --url (or NMS_URL)");
  return offline();
}

const out = (text: string): void => void process.stdout.write(text);
const printJson = (value: unknown): void => out(JSON.stringify(value, null, 2) + "\n");

/** The connection options every account and token command takes. */
function withConnection(cmd: Command, loginFlags: boolean): Command {
  cmd
    .option("--url <url>", "the running service's base URL (or NMS_URL): work through its REST API instead of the store")
    .option("--token <token>", "with --url: a session or API token of an admin (or NMS_TOKEN)")
    .option("--login-username <name>", "with --url: log in as this admin instead of a token")
    .option("--login-password <password>", "the password for --login-username");
  if (loginFlags) cmd.option("--username <name>", "with --url: log in as this admin").option("--password <password>", "the password for --username");
  return cmd.option("--json", "print machine-readable JSON only");
}

export function registerAdminCommands(program: Command): void {
  const accounts = program.command("accounts").description("create, list, update and delete accounts (offline on the store, or through the API with --url)");
  withConnection(
    accounts
      .command("create")
      .description("create an account; without --password a random one is generated and printed once")
      .option("--username <name>", "the new account's username (letters, digits, . _ @ -)")
      .option("--role <role>", `one of ${ROLES.join(", ")}`)
      .option("--password <password>", "the new account's password (at least 8 characters)")
      .option("--scope <scope>", 'All (default) or JSON like {"folders":["<uuid>",...]}'),
    false,
  ).action(async (o: ConnectionFlags & { username?: string; role?: string; password?: string; scope?: string; json?: boolean }) => {
    if (!o.username) throw new CliUsageError("--username is required");
    const r = role(o.role);
    const s = scope(o.scope);
    const password = o.password ?? randomPassword();
    if (password.length < 8) throw new CliUsageError("--password must have at least 8 characters");
    const id = await admin(o).createAccount({ username: o.username, password, role: r, scope: s });
    if (o.json) return printJson({ id, username: o.username, role: r, scope: s, ...(o.password ? {} : { password }) });
    out(`created account ${o.username} (${r}) id=${id}\n`);
    if (!o.password) out(`password: ${password}  (shown once)\n`);
  });
  withConnection(accounts.command("list").description("list the accounts, by username"), true).action(
    async (o: ConnectionFlags & { username?: string; password?: string; json?: boolean }) => {
      const list = await admin(o, o).listAccounts();
      if (o.json) return printJson(list);
      for (const a of list) out(`${a.id}  ${a.username}  ${a.role}  ${JSON.stringify(a.scope)}\n`);
    },
  );

  withConnection(
    accounts
      .command("update")
      .description("change an account's role, scope or password (each only when given)")
      .argument("<username>", "the account to change")
      .option("--role <role>", `one of ${ROLES.join(", ")}`)
      .option("--scope <scope>", 'All or JSON like {"folders":["<uuid>",...]}')
      .option("--password <password>", "a new password (at least 8 characters); its sessions end"),
    false,
  ).action(async (username: string, o: ConnectionFlags & { role?: string; scope?: string; password?: string; json?: boolean }) => {
    if (o.role === undefined && o.scope === undefined && o.password === undefined) throw new CliUsageError("give --role, --scope or --password");
    if (o.password !== undefined && o.password.length < 8) throw new CliUsageError("--password must have at least 8 characters");
    const changes = { role: o.role === undefined ? undefined : role(o.role), scope: o.scope === undefined ? undefined : scope(o.scope), password: o.password };
    const before = await admin(o).updateAccount(username, changes);
    const after = { id: before.id, username: before.username, role: changes.role ?? before.role, scope: changes.scope ?? before.scope };
    if (o.json) return printJson({ ...after, password_changed: o.password !== undefined });
    out(`updated account ${after.username} (${after.role}) scope=${JSON.stringify(after.scope)}${o.password !== undefined ? ", new password" : ""}\n`);
  });
  withConnection(
    accounts.command("delete").description("delete an account and end its sessions").argument("<username>", "the account to delete"),
    false,
  ).action(async (username: string, o: ConnectionFlags & { json?: boolean }) => {
    const gone = await admin(o).deleteAccount(username);
    if (o.json) return printJson({ id: gone.id, username: gone.username, deleted: true });
    out(`deleted account ${gone.username} id=${gone.id}\n`);
  });

  const tokens = program.command("tokens").description("create, list and revoke API tokens (offline on the store, or through the API with --url)");
  withConnection(
    tokens
      .command("create")
      .description("create an API token, printed once")
      .option("--name <name>", "what the token is for")
      .option("--role <role>", `one of ${ROLES.join(", ")}`)
      .option("--scope <scope>", 'All (default) or JSON like {"folders":["<uuid>",...]}')
      .option("--expires-at <timestamp>", "an RFC 3339 timestamp in the future (default: never expires)"),
    true,
  ).action(
    async (o: ConnectionFlags & { name?: string; role?: string; scope?: string; expiresAt?: string; username?: string; password?: string; json?: boolean }) => {
      if (!o.name) throw new CliUsageError("--name is required");
      const r = role(o.role);
      const s = scope(o.scope);
      const expires = expiresAt(o.expiresAt);
      const created = await admin(o, o).createToken({ name: o.name, role: r, scope: s, expires_at: expires });
      if (o.json) return printJson({ id: created.id, name: o.name, role: r, scope: s, expires_at: expires, token: created.token });
      out(`created token ${o.name} (${r}) id=${created.id}\ntoken: ${created.token}  (shown once)\n`);
    },
  );
  withConnection(tokens.command("list").description("list the API tokens, newest first (never their values)"), true).action(
    async (o: ConnectionFlags & { username?: string; password?: string; json?: boolean }) => {
      const list = await admin(o, o).listTokens();
      if (o.json) return printJson(list);
      for (const t of list) out(`${t.id}  ${t.name}  ${t.role}  ${JSON.stringify(t.scope)}  expires=${t.expires_at ?? "never"}\n`);
    },
  );
  withConnection(
    tokens.command("revoke").description("revoke an API token: requests with it are refused from now on").argument("<id>", "the token's id (nms tokens list)"),
    true,
  ).action(async (id: string, o: ConnectionFlags & { username?: string; password?: string; json?: boolean }) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
      throw new CliUsageError(`"${id}" is not a token id (a uuid; nms tokens list shows them)`);
    await admin(o, o).revokeToken(id);
    if (o.json) return printJson({ id, revoked: true });
    out(`revoked token ${id}\n`);
  });
}
