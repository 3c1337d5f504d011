-- Events plugin: event sources, event rules, and the events themselves (daily partitions).

-- Where events come from. The two built-in catch-all sources (one per listener stream, fixed ids, node_id NULL)
-- take every syslog message and trap that no per-node source of the same kind claims; a per-node source
-- (kind syslog or trap, node_id set) claims what that node sends, and when disabled its events are dropped.
-- An http source is an ingest endpoint with its own token (sealed; only its hash is looked up).
CREATE TABLE sources (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('syslog', 'trap', 'http')),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  node_id uuid,
  enabled boolean NOT NULL DEFAULT true,
  builtin boolean NOT NULL DEFAULT false,
  token_hash text,
  token_sealed text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'http') = (token_hash IS NOT NULL))
);
CREATE UNIQUE INDEX sources_name ON sources (lower(name));
CREATE UNIQUE INDEX sources_node_kind ON sources (kind, node_id) WHERE node_id IS NOT NULL AND kind <> 'http';
CREATE UNIQUE INDEX sources_token ON sources (token_hash) WHERE token_hash IS NOT NULL;
CREATE INDEX sources_page ON sources (created_at, id);

INSERT INTO sources (id, kind, name, builtin) VALUES
  ('5e7a0c1d-2b3f-4a6e-9c8d-000000000514', 'syslog', 'Syslog listeners', true),
  ('5e7a0c1d-2b3f-4a6e-9c8d-000000000162', 'trap', 'Trap listener', true);

CREATE TABLE rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  pattern text NOT NULL,
  match_kind text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  clear_pattern text,
  enabled boolean NOT NULL DEFAULT true,
  min_count integer NOT NULL,
  window_secs integer NOT NULL,
  ttl_secs integer,
  node_id uuid,
  source_id uuid REFERENCES sources (id) ON DELETE RESTRICT,
  source_kind text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rules_page ON rules (created_at, id);

-- One row per received message. Keyset reads walk (received_at DESC, id DESC); id is time-ordered.
-- folder_path (the node's folders from the root, empty when unattributed) serves folder scope.
CREATE TABLE events (
  id uuid NOT NULL,
  received_at timestamptz NOT NULL,
  kind text NOT NULL,
  transport text NOT NULL,
  listener text NOT NULL,
  source_ip inet,
  source_id uuid,
  node_id uuid,
  folder_path uuid[] NOT NULL DEFAULT '{}',
  severity smallint,
  facility smallint,
  host text,
  app text,
  msgid text,
  message text NOT NULL,
  trap_oid text,
  data jsonb,
  raw text,
  malformed boolean NOT NULL DEFAULT false,
  action text NOT NULL,
  rule_id uuid,
  PRIMARY KEY (received_at, id)
) PARTITION BY RANGE (received_at);
CREATE INDEX events_page ON events (received_at DESC, id DESC);
CREATE INDEX events_node ON events (node_id, received_at DESC) WHERE node_id IS NOT NULL;
CREATE INDEX events_folders ON events USING gin (folder_path);
