// #/accounts (admins only): accounts (create, change role and folder scope, reset password, delete) and API tokens
// (create, shown once; revoke). Scope folders are chosen with the folder picker.
import { useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { Modal } from "../alertActions.tsx";
import { MultiPicker } from "../pickers.tsx";
import { api, can, unwrapped, useLoad, useSession } from "../session.tsx";
import { ErrorNote, fmtTime, Section } from "../ui.tsx";

type Account = Schemas["AccountView"];
type Token = Schemas["TokenView"];
type Role = Account["role"];
type Scope = "All" | { folders: string[] };
const ROLES: Role[] = ["viewer", "operator", "admin"];

/** Reads every page of a keyset list (accounts by username, tokens newest first). */
async function allAccounts(): Promise<Account[]> {
  const out: Account[] = [];
  for (let after: string | undefined; ;) {
    const rows = await unwrapped(api.GET("/api/v1/accounts", { params: { query: { limit: 1000, ...(after ? { after } : {}) } } }));
    out.push(...rows);
    if (rows.length < 1000) return out;
    after = rows[rows.length - 1].username;
  }
}

async function allTokens(): Promise<Token[]> {
  const out: Token[] = [];
  for (let last: Token | undefined; ;) {
    const rows = await unwrapped(
      api.GET("/api/v1/tokens", { params: { query: { limit: 1000, ...(last ? { before: last.created_at, before_id: last.id } : {}) } } }),
    );
    out.push(...rows);
    if (rows.length < 1000) return out;
    last = rows[rows.length - 1];
  }
}

const scopeText = (s: unknown, names: Record<string, string>) =>
  s === "All" ? "All" : ((s as { folders: string[] }).folders ?? []).map((f) => names[f] ?? f).join(", ");

/** Role, and scope: all folders or some (chosen with the folder picker). */
function RoleScope({ id, role, setRole, scope, setScope }: { id: string; role: Role; setRole: (r: Role) => void; scope: Scope; setScope: (s: Scope) => void }) {
  const folders = scope === "All" ? [] : scope.folders;
  return (
    <>
      <div class="field">
        <label for={`${id}-role`}>Role</label>
        <select id={`${id}-role`} value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </div>
      <fieldset class="field">
        <legend>Scope</legend>
        <label>
          <input type="radio" name={`${id}-scope`} checked={scope === "All"} onChange={() => setScope("All")} /> Every folder
        </label>
        <label>
          <input type="radio" name={`${id}-scope`} checked={scope !== "All"} onChange={() => setScope({ folders })} /> Only some folders
        </label>
        {scope !== "All" ? (
          <MultiPicker id={`${id}-folders`} kind="folder" label="Folders" value={folders} max={256} onChange={(ids) => setScope({ folders: ids })} />
        ) : null}
      </fieldset>
    </>
  );
}

function useFolderNames(): Record<string, string> {
  const folders = useLoad(() => unwrapped(api.GET("/api/v1/node-groups", { params: { query: { limit: 1000 } } })), []);
  return Object.fromEntries((folders.data ?? []).map((f) => [f.id, f.name]));
}

export function Accounts() {
  const session = useSession();
  if (!can("ManageSystem")) {
    return (
      <p class="error" role="alert">
        Only an admin manages accounts and tokens.
      </p>
    );
  }
  return (
    <div class="grid console-alerts">
      <AccountsCard me={session.identity?.username ?? ""} />
      <TokensCard />
    </div>
  );
}

function AccountsCard({ me }: { me: string }) {
  const accounts = useLoad(allAccounts, []);
  const names = useFolderNames();
  const [dialog, setDialog] = useState<{ kind: "create" } | { kind: "edit"; account: Account } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const remove = async (a: Account) => {
    if (!confirm(`Delete the account ${a.username}? Its sessions end.`)) return;
    setError(null);
    try {
      await unwrapped(api.DELETE("/api/v1/accounts/{id}", { params: { path: { id: a.id } } }));
      accounts.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Section
      title="Accounts"
      actions={
        <button type="button" class="small" onClick={() => setDialog({ kind: "create" })}>
          New account…
        </button>
      }
    >
      <ErrorNote error={accounts.error} />
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="table-wrap">
        <table data-testid="accounts">
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Role</th>
              <th scope="col">Scope</th>
              <th scope="col">Changed</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(accounts.data ?? []).map((a) => (
              <tr key={a.id} data-account={a.username}>
                <td>
                  {a.username} {a.username === me ? <span class="muted">(you)</span> : null}
                </td>
                <td>{a.role}</td>
                <td>{scopeText(a.scope, names)}</td>
                <td>
                  <time>{fmtTime(a.updated_at)}</time>
                </td>
                <td class="row-actions">
                  <button type="button" class="small" aria-label={`Edit ${a.username}`} onClick={() => setDialog({ kind: "edit", account: a })}>
                    Edit…
                  </button>
                  <button type="button" class="small danger" aria-label={`Delete ${a.username}`} onClick={() => void remove(a)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {dialog ? <AccountDialog account={dialog.kind === "edit" ? dialog.account : undefined} onClose={() => setDialog(null)} onDone={accounts.reload} /> : null}
    </Section>
  );
}

/** Create an account, or change one's role and scope and optionally reset its password. */
function AccountDialog({ account, onClose, onDone }: { account?: Account; onClose: () => void; onDone: () => void }) {
  const [username, setUsername] = useState(account?.username ?? "");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>(account?.role ?? "viewer");
  const [scope, setScope] = useState<Scope>((account?.scope as Scope | undefined) ?? "All");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (scope !== "All" && scope.folders.length === 0) throw new Error("Choose at least one folder, or every folder.");
      if (account) {
        await unwrapped(
          api.PUT("/api/v1/accounts/{id}", { params: { path: { id: account.id } }, body: { role, scope: scope as never, ...(password ? { password } : {}) } }),
        );
      } else {
        await unwrapped(api.POST("/api/v1/accounts", { body: { username, password, role, scope: scope as never } }));
      }
      onDone();
      onClose();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={account ? `Edit account ${account.username}` : "New account"} onClose={onClose} testId="account-dialog">
      <form class="form" onSubmit={submit}>
        {account ? null : (
          <div class="field">
            <label for="account-username">Username</label>
            <input id="account-username" autocomplete="off" value={username} onInput={(e) => setUsername((e.target as HTMLInputElement).value)} />
          </div>
        )}
        <div class="field">
          <label for="account-password">{account ? "New password (empty keeps the current one)" : "Password (at least 8 characters)"}</label>
          <input
            id="account-password"
            type="password"
            autocomplete="new-password"
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </div>
        <RoleScope id="account" role={role} setRole={setRole} scope={scope} setScope={setScope} />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {account ? "Save" : "Create account"}
          </button>
          <button type="button" class="small" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function TokensCard() {
  const tokens = useLoad(allTokens, []);
  const names = useFolderNames();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const revoke = async (t: Token) => {
    if (!confirm(`Revoke the token ${t.name}? Requests with it are refused from now on.`)) return;
    setError(null);
    try {
      await unwrapped(api.DELETE("/api/v1/tokens/{id}", { params: { path: { id: t.id } } }));
      tokens.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Section
      title="API tokens"
      actions={
        <button type="button" class="small" onClick={() => setCreating(true)}>
          New token…
        </button>
      }
    >
      <ErrorNote error={tokens.error} />
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {created ? (
        <div class="token-once" role="status" data-testid="new-token">
          <p>
            The token <strong>{created.name}</strong>. Copy it now: it is shown only this once.
          </p>
          <code class="secret">{created.token}</code>{" "}
          <button type="button" class="small" onClick={() => void navigator.clipboard?.writeText(created.token).catch(() => undefined)}>
            Copy
          </button>{" "}
          <button type="button" class="small" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      ) : null}
      <div class="table-wrap">
        <table data-testid="tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Scope</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(tokens.data ?? []).map((t) => (
              <tr key={t.id} data-token={t.name}>
                <td>{t.name}</td>
                <td>{t.role}</td>
                <td>{scopeText(t.scope, names)}</td>
                <td>{t.expires_at ? fmtTime(t.expires_at) : "never"}</td>
                <td>{t.last_used_at ? fmtTime(t.last_used_at) : "never"}</td>
                <td class="row-actions">
                  <button type="button" class="small danger" aria-label={`Revoke ${t.name}`} onClick={() => void revoke(t)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {creating ? (
        <TokenDialog
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreated(c);
            tokens.reload();
          }}
        />
      ) : null}
    </Section>
  );
}

function TokenDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (c: { name: string; token: string }) => void }) {
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [scope, setScope] = useState<Scope>("All");
  const [expires, setExpires] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (scope !== "All" && scope.folders.length === 0) throw new Error("Choose at least one folder, or every folder.");
      const expires_at = expires ? new Date(expires).toISOString() : undefined;
      const res = await unwrapped(api.POST("/api/v1/tokens", { body: { name, role, scope: scope as never, ...(expires_at ? { expires_at } : {}) } }));
      onCreated({ name, token: res.token });
      onClose();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title="New API token" onClose={onClose} testId="token-dialog">
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for="token-name">Name</label>
          <input id="token-name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </div>
        <RoleScope id="token" role={role} setRole={setRole} scope={scope} setScope={setScope} />
        <div class="field">
          <label for="token-expires">Expires (empty: never)</label>
          <input id="token-expires" type="datetime-local" value={expires} onInput={(e) => setExpires((e.target as HTMLInputElement).value)} />
        </div>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Create token
          </button>
          <button type="button" class="small" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
