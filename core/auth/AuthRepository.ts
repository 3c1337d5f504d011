import { isoTimestamp, type Queryable, type Store } from "../store/Store.js";
import type { Role, Scope } from "./Caller.js";

export interface AccountRow {
  id: string;
  username: string;
  role: Role;
  scope: Scope;
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface TokenRow {
  id: string;
  name: string;
  role: Role;
  scope: Scope;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface ResolvedCredential {
  kind: "session" | "token";
  id: string;
  account_id: string | null;
  username: string;
  role: Role;
  scope: Scope;
  expired: boolean;
  /** Expiry in Unix milliseconds (null = none), for the cache to judge later requests by. */
  expires_ms: number | null;
}

const ACCOUNT_COLS = `id, username, role, scope, password_hash, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("updated_at")} AS updated_at`;
const TOKEN_COLS = `id, name, role, scope, ${isoTimestamp("created_at")} AS created_at, ${isoTimestamp("expires_at")} AS expires_at, ${isoTimestamp("last_used_at")} AS last_used_at`;

/** SQL for accounts, sessions and API tokens (schema `core`). No logic here. */
export class AuthRepository {
  constructor(private readonly store: Store) {}

  async findCredential(hash: Buffer): Promise<ResolvedCredential | undefined> {
    const { rows } = await this.store.query<ResolvedCredential>(
      `SELECT 'session' AS kind, s.id, a.id AS account_id, a.username, a.role, a.scope, s.expires_at <= now() AS expired,
              (extract(epoch FROM s.expires_at) * 1000)::float8 AS expires_ms
         FROM core.sessions s JOIN core.accounts a ON a.id = s.account_id WHERE s.token_hash = $1
       UNION ALL
       SELECT 'token', t.id, NULL, t.name, t.role, t.scope, coalesce(t.expires_at <= now(), false), (extract(epoch FROM t.expires_at) * 1000)::float8
         FROM core.api_tokens t WHERE t.token_hash = $1
       LIMIT 1`,
      [hash],
    );
    return rows[0];
  }

  /**
   * The auth epoch and the database's clock (see CredentialCache). A named (prepared) statement on the primary's pool:
   * it runs once per request or batch of requests, and must never be answered by a lagging copy.
   */
  async readEpoch(): Promise<{ v: string; nowMs: number }> {
    const pool = this.store.pool;
    if (!pool) throw new Error("no store");
    const { rows } = await pool.query<{ v: string; now_ms: number }>({
      name: "nms_auth_epoch",
      text: "SELECT v, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms FROM core.auth_epoch",
    });
    return { v: rows[0].v, nowMs: rows[0].now_ms };
  }

  async findAccountByUsername(username: string): Promise<AccountRow | undefined> {
    const { rows } = await this.store.query<AccountRow>(`SELECT ${ACCOUNT_COLS} FROM core.accounts WHERE lower(username) = lower($1)`, [username]);
    return rows[0];
  }

  async getAccount(id: string, db: Queryable = this.store): Promise<AccountRow | undefined> {
    const { rows } = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLS} FROM core.accounts WHERE id = $1`, [id]);
    return rows[0];
  }

  /** Serialises changes that could remove the last unrestricted admin (call inside a transaction). */
  async lockAdmins(db: Queryable): Promise<void> {
    await db.query("SELECT pg_advisory_xact_lock(hashtext('nms.admins'))");
  }

  /** Keyset page ordered by lower(username), id. */
  async listAccounts(limit: number, after?: string): Promise<AccountRow[]> {
    const { rows } = await this.store.query<AccountRow>(
      `SELECT ${ACCOUNT_COLS} FROM core.accounts WHERE ($1::text IS NULL OR lower(username) > lower($1)) ORDER BY lower(username), id LIMIT $2`,
      [after ?? null, limit],
    );
    return rows;
  }

  async insertAccount(a: { username: string; role: Role; scope: Scope; passwordHash: string }): Promise<string> {
    const { rows } = await this.store.query<{ id: string }>(
      "INSERT INTO core.accounts (username, role, scope, password_hash) VALUES ($1, $2, $3, $4) RETURNING id",
      [a.username, a.role, JSON.stringify(a.scope), a.passwordHash],
    );
    return rows[0].id;
  }

  async updateAccount(id: string, a: { role: Role; scope: Scope; passwordHash?: string }, db: Queryable = this.store): Promise<boolean> {
    const { rowCount } = await db.query(
      "UPDATE core.accounts SET role = $2, scope = $3, password_hash = coalesce($4, password_hash), updated_at = now() WHERE id = $1",
      [id, a.role, JSON.stringify(a.scope), a.passwordHash ?? null],
    );
    return rowCount === 1;
  }

  async deleteAccount(id: string, db: Queryable = this.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM core.accounts WHERE id = $1", [id]);
    return rowCount === 1;
  }

  /** Admin accounts with scope All: the ones that can manage the system. */
  async countUnrestrictedAdmins(db: Queryable = this.store): Promise<number> {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.accounts WHERE role = 'admin' AND scope = '"All"'::jsonb`);
    return rows[0].n;
  }

  async insertSession(accountId: string, hash: Buffer, ttlSecs: number): Promise<{ id: string; expires_at: string }> {
    const { rows } = await this.store.query<{ id: string; expires_at: string }>(
      `INSERT INTO core.sessions (account_id, token_hash, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
       RETURNING id, ${isoTimestamp("expires_at")} AS expires_at`,
      [accountId, hash, ttlSecs],
    );
    return rows[0];
  }

  async deleteSession(id: string): Promise<void> {
    await this.store.query("DELETE FROM core.sessions WHERE id = $1", [id]);
  }

  async deleteExpiredSessions(): Promise<number> {
    const { rowCount } = await this.store.query("DELETE FROM core.sessions WHERE expires_at <= now()");
    return rowCount ?? 0;
  }

  async insertToken(t: { name: string; role: Role; scope: Scope; hash: Buffer; expiresAt: string | null }): Promise<string> {
    const { rows } = await this.store.query<{ id: string }>(
      "INSERT INTO core.api_tokens (name, role, scope, token_hash, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
      [t.name, t.role, JSON.stringify(t.scope), t.hash, t.expiresAt],
    );
    return rows[0].id;
  }

  /**
   * Makes the bootstrap token exactly this one (or none): an admin token with this
   * hash, flagged, and any other flagged token revoked. Idempotent across replicas.
   */
  async setBootstrapToken(hash: Buffer | null): Promise<void> {
    await this.store.tx(async (db) => {
      await db.query("SELECT pg_advisory_xact_lock(hashtext('nms.bootstrap'))");
      await db.query("DELETE FROM core.api_tokens WHERE bootstrap AND ($1::bytea IS NULL OR token_hash <> $1)", [hash]);
      if (hash) {
        await db.query(
          `INSERT INTO core.api_tokens (name, role, scope, token_hash, bootstrap) VALUES ('bootstrap', 'admin', '"All"', $1, true)
           ON CONFLICT (token_hash) DO UPDATE SET role = 'admin', scope = '"All"', expires_at = NULL, bootstrap = true`,
          [hash],
        );
      }
    });
  }

  async countAccounts(): Promise<number> {
    const { rows } = await this.store.query<{ n: number }>("SELECT count(*)::int AS n FROM core.accounts");
    return rows[0].n;
  }

  async deleteSessionsOf(accountId: string, db: Queryable = this.store): Promise<void> {
    await db.query("DELETE FROM core.sessions WHERE account_id = $1", [accountId]);
  }

  /** Keyset page, newest first, by (created_at, id); created_at carried as text with microseconds. */
  async listTokens(limit: number, before?: { at: string; id: string | null }): Promise<TokenRow[]> {
    const { rows } = await this.store.query<TokenRow>(
      `SELECT ${TOKEN_COLS} FROM core.api_tokens
        WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, coalesce($2::uuid, '00000000-0000-0000-0000-000000000000'::uuid))
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [before?.at ?? null, before?.id ?? null, limit],
    );
    return rows;
  }

  async deleteToken(id: string): Promise<boolean> {
    const { rowCount } = await this.store.query("DELETE FROM core.api_tokens WHERE id = $1", [id]);
    return rowCount === 1;
  }

  async touchToken(id: string): Promise<void> {
    await this.store.query(
      "UPDATE core.api_tokens SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
      [id],
    );
  }
}
