-- Inventory: what is monitored. Folders (node_groups) form a tree; nodes sit in a folder or at the tree root.

CREATE TABLE node_groups (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  parent_id uuid REFERENCES node_groups (id) ON DELETE RESTRICT,
  group_type text NOT NULL DEFAULT 'folder' CHECK (length(group_type) BETWEEN 1 AND 40),
  pool text CHECK (pool ~ '^[A-Za-z0-9_-]{1,63}$'),
  latitude double precision CHECK (latitude BETWEEN -90 AND 90),
  longitude double precision CHECK (longitude BETWEEN -180 AND 180),
  sort_order double precision NOT NULL DEFAULT 0,
  tags text[] NOT NULL DEFAULT '{}',
  tags_excluded text[] NOT NULL DEFAULT '{}',
  ip_ranges cidr[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (parent_id IS DISTINCT FROM id)
);
CREATE INDEX node_groups_parent_idx ON node_groups (parent_id);
CREATE INDEX node_groups_list_idx ON node_groups (lower(name), id);

CREATE TABLE profiles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  category text,
  parent_id uuid REFERENCES profiles (id) ON DELETE RESTRICT,
  vendor text,
  poll_interval_secs integer NOT NULL DEFAULT 300 CHECK (poll_interval_secs BETWEEN 10 AND 86400),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (parent_id IS DISTINCT FROM id)
);
CREATE UNIQUE INDEX profiles_name_key ON profiles (lower(name));

-- Secrets live only in secret_sealed (sealed JSON); settings holds the non-secret parts.
CREATE TABLE credentials (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind text NOT NULL CHECK (kind IN ('snmp_v2c', 'snmp_v3', 'netcloud_api', 'http')),
  settings jsonb NOT NULL DEFAULT '{}',
  secret_sealed text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX credentials_name_key ON credentials (lower(name));

CREATE TABLE nodes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  address inet NOT NULL,
  -- 'device' for nodes that stand at an address (discovery import skips their addresses).
  node_kind text NOT NULL DEFAULT 'device',
  credential_id uuid REFERENCES credentials (id) ON DELETE RESTRICT,
  group_id uuid REFERENCES node_groups (id) ON DELETE RESTRICT,
  parent_id uuid REFERENCES nodes (id) ON DELETE SET NULL,
  pool text CHECK (pool ~ '^[A-Za-z0-9_-]{1,63}$'),
  profile_id uuid REFERENCES profiles (id) ON DELETE SET NULL,
  vendor text,
  model text,
  snmp_port integer NOT NULL DEFAULT 161 CHECK (snmp_port BETWEEN 1 AND 65535),
  notes text,
  tags text[] NOT NULL DEFAULT '{}',
  tags_excluded text[] NOT NULL DEFAULT '{}',
  profile_locked boolean NOT NULL DEFAULT false,
  sort_order double precision NOT NULL DEFAULT 0,
  sys_object_id text,
  sys_descr text,
  sys_name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (parent_id IS DISTINCT FROM id)
);
CREATE INDEX nodes_group_idx ON nodes (group_id);
CREATE INDEX nodes_address_idx ON nodes (address);
CREATE INDEX nodes_list_idx ON nodes (lower(name), id);
CREATE INDEX nodes_profile_idx ON nodes (profile_id);
CREATE INDEX nodes_credential_idx ON nodes (credential_id);

CREATE TABLE classification_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  enabled boolean NOT NULL DEFAULT true,
  priority integer NOT NULL DEFAULT 100,
  profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
  sysobjectid_prefix text CHECK (sysobjectid_prefix ~ '^\.?[0-9]+(\.[0-9]+)*$'),
  sysdescr_regex text,
  vendor text,
  model text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (sysobjectid_prefix IS NOT NULL OR sysdescr_regex IS NOT NULL)
);
CREATE INDEX classification_rules_order_idx ON classification_rules (priority, id);

-- One URL check per node (1:1).
CREATE TABLE url_checks (
  node_id uuid PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  url text NOT NULL,
  method text NOT NULL DEFAULT 'GET',
  timeout_ms integer NOT NULL DEFAULT 5000,
  follow_redirects boolean NOT NULL DEFAULT true,
  verify_tls boolean NOT NULL DEFAULT true,
  expected_status jsonb NOT NULL DEFAULT '{"kind":"two_xx"}',
  body_match jsonb,
  body_max_bytes integer NOT NULL DEFAULT 65536 CHECK (body_max_bytes BETWEEN 1024 AND 1048576),
  json_extract jsonb NOT NULL DEFAULT '[]',
  credential_id uuid REFERENCES credentials (id) ON DELETE RESTRICT,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One DNS check per node (1:1).
CREATE TABLE dns_checks (
  node_id uuid PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  name text NOT NULL,
  record_type text NOT NULL DEFAULT 'A',
  resolver_ip inet,
  resolver_port integer NOT NULL DEFAULT 53 CHECK (resolver_port BETWEEN 1 AND 65535),
  timeout_ms integer NOT NULL DEFAULT 2000,
  max_depth integer NOT NULL DEFAULT 5,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Folder pins of a person (session account).
CREATE TABLE pins (
  account_id uuid NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
  group_id uuid NOT NULL REFERENCES node_groups (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, group_id)
);

-- Every folder with its path from the root (ids and names), effective pool and effective tags.
CREATE VIEW folder_paths AS
WITH RECURSIVE walk AS (
  SELECT g.id, g.parent_id, ARRAY[g.id] AS path, ARRAY[g.name] AS names, g.pool AS effective_pool,
         ARRAY(SELECT DISTINCT t FROM unnest(g.tags) t WHERE t <> ALL (g.tags_excluded) ORDER BY t) AS effective_tags,
         0 AS depth
    FROM node_groups g WHERE g.parent_id IS NULL
  UNION ALL
  SELECT c.id, c.parent_id, w.path || c.id, w.names || c.name, coalesce(c.pool, w.effective_pool),
         ARRAY(SELECT DISTINCT t FROM unnest(w.effective_tags || c.tags) t WHERE t <> ALL (c.tags_excluded) ORDER BY t),
         w.depth + 1
    FROM node_groups c JOIN walk w ON c.parent_id = w.id
)
SELECT id, parent_id, path, names, effective_pool, effective_tags, depth FROM walk;

-- The published directory (contract): other plugins join this, never the tables.
CREATE VIEW node_directory AS
SELECT n.id, n.name, n.address, n.group_id,
       coalesce(f.path, '{}'::uuid[]) AS folder_path,
       coalesce(f.names, '{}'::text[]) AS folder_names,
       coalesce(n.pool, f.effective_pool, 'default') AS effective_pool,
       ARRAY(SELECT DISTINCT t FROM unnest(coalesce(f.effective_tags, '{}'::text[]) || n.tags) t WHERE t <> ALL (n.tags_excluded) ORDER BY t) AS effective_tags,
       n.profile_id, n.vendor, n.model
  FROM nodes n LEFT JOIN folder_paths f ON f.id = n.group_id;
