import type { Migration } from "./Migrator.js";

/** The kernel's own schema `core`: accounts, sessions, API tokens, the Socket.IO adapter's attachments, dead letters, failed logins. */
export const coreMigrations: Migration[] = [
  {
    name: "0001_auth",
    up: `
      CREATE TABLE accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        username text NOT NULL CHECK (length(username) BETWEEN 1 AND 64),
        role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
        scope jsonb NOT NULL DEFAULT '"All"',
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX accounts_username_key ON accounts (lower(username));
      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        token_hash bytea NOT NULL UNIQUE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX sessions_account_idx ON sessions (account_id);
      CREATE INDEX sessions_expires_idx ON sessions (expires_at);
      CREATE TABLE api_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
        role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
        scope jsonb NOT NULL DEFAULT '"All"',
        token_hash bytea NOT NULL UNIQUE,
        expires_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX api_tokens_created_idx ON api_tokens (created_at DESC, id DESC);
    `,
  },
  {
    name: "0002_socket_io_attachments",
    // @socket.io/postgres-adapter does not create its table; without it broadcasts over 8000 bytes are dropped.
    up: `
      CREATE TABLE socket_io_attachments (
        id bigserial UNIQUE,
        created_at timestamptz DEFAULT now(),
        payload bytea
      );
    `,
  },
  {
    name: "0003_bootstrap_flag",
    // Marks the token NMS_BOOTSTRAP_TOKEN made, so it is revoked when the variable is removed or changed.
    up: `ALTER TABLE api_tokens ADD COLUMN bootstrap boolean NOT NULL DEFAULT false;`,
  },
  {
    name: "0004_dead_letters",
    // Rows PostgreSQL refused in a batch written by copyWithDeadLetters (store/copyWriter.ts): kept with the reason
    // instead of failing the batch; listed newest first; pruned by age and count (pruneDeadLetters).
    up: `
      CREATE TABLE dead_letters (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        target text NOT NULL,
        sqlstate text,
        reason text NOT NULL,
        detail text,
        payload jsonb NOT NULL
      );
      CREATE INDEX dead_letters_at ON dead_letters (at, id);
    `,
  },
  {
    name: "0005_login_failures",
    // Failed logins of every replica (auth/LoginRateLimiter.ts): one row per failure and key ("u:<username>" or
    // "a:<address>"), so N replicas allow what one does. Rows older than the window are pruned as failures are written.
    up: `
      CREATE TABLE login_failures (
        key text NOT NULL,
        at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX login_failures_key_at ON login_failures (key, at);
      CREATE INDEX login_failures_at ON login_failures (at);
    `,
  },
  {
    name: "0006_auth_epoch",
    // A counter every change that can end or narrow a credential moves (auth/AuthService.ts caches resolved callers and
    // reads it on every request): role, scope, password or username of an account; role, scope, hash or expiry of a
    // token; any deletion. Statement triggers, so a bulk delete moves it once; new rows need none (nothing caches a miss).
    up: `
      CREATE TABLE auth_epoch (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        v bigint NOT NULL
      );
      INSERT INTO auth_epoch (v) VALUES (1);
      CREATE FUNCTION bump_auth_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE core.auth_epoch SET v = v + 1;
        RETURN NULL;
      END $$;
      CREATE TRIGGER accounts_auth_epoch AFTER UPDATE OF role, scope, password_hash, username OR DELETE OR TRUNCATE ON accounts
        FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();
      CREATE TRIGGER sessions_auth_epoch AFTER UPDATE OR DELETE OR TRUNCATE ON sessions
        FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();
      CREATE TRIGGER api_tokens_auth_epoch AFTER UPDATE OF role, scope, token_hash, expires_at OR DELETE OR TRUNCATE ON api_tokens
        FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();
    `,
  },
  {
    name: "0010_partition_inbox",
    // Work for a partition another replica owns (store/Partitions.ts, ADR 0017): rows its owner reads and deletes, in
    // id order, on the NOTIFY sent with them. Unlogged: a server crash empties it, like every replica's memory.
    up: `
      CREATE UNLOGGED TABLE partition_inbox (
        id bigserial PRIMARY KEY,
        space text NOT NULL,
        partition integer NOT NULL,
        payload jsonb NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX partition_inbox_space_partition ON partition_inbox (space, partition, id);
    `,
  },
];
