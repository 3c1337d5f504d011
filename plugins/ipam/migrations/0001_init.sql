-- IPAM servers (a NetBox-like REST API), what their sync last pulled (sites, prefixes), the IPAM site -> folder
-- mapping, and overlap acks. The token is sealed ("sealed:v1:...") and never answered.
CREATE TABLE servers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 120),
  base_url text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  sync_interval_secs integer NOT NULL DEFAULT 3600 CHECK (sync_interval_secs BETWEEN 60 AND 604800),
  -- Custom field of a prefix naming its site; null = the prefix's own site (or scope when it is a site).
  site_id_field text,
  token text NOT NULL,
  ca_cert_pem text,
  -- The dispatcher job starts a sync when this has passed, and moves it on by sync_interval_secs.
  next_sync_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_sync_at timestamptz,
  last_success_at timestamptz,
  last_error_class text,
  site_count integer,
  prefix_count integer,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX servers_list ON servers (lower(name), id);
CREATE INDEX servers_due ON servers (next_sync_at) WHERE enabled;

CREATE TABLE sites (
  server_id uuid NOT NULL REFERENCES servers ON DELETE CASCADE,
  site_id text NOT NULL,
  name text NOT NULL,
  slug text,
  PRIMARY KEY (server_id, site_id)
);
CREATE INDEX sites_list ON sites (server_id, lower(name), site_id);

CREATE TABLE prefixes (
  server_id uuid NOT NULL REFERENCES servers ON DELETE CASCADE,
  ipam_id text NOT NULL,
  prefix cidr NOT NULL,
  -- The IPAM site the prefix belongs to (null: none; such a prefix takes part in no overlap).
  site_id text,
  -- What an overlap names the site by: 'ipam:<server id>:<site id>'.
  site_key text GENERATED ALWAYS AS (CASE WHEN site_id IS NULL THEN NULL ELSE 'ipam:' || server_id::text || ':' || site_id END) STORED,
  PRIMARY KEY (server_id, ipam_id)
);
-- Overlaps are a self-join on && (inet_ops GiST); the sites of an overlap are looked up by prefix equality.
CREATE INDEX prefixes_overlap ON prefixes USING gist (prefix inet_ops) WHERE site_id IS NOT NULL;
CREATE INDEX prefixes_eq ON prefixes (prefix) WHERE site_id IS NOT NULL;
CREATE INDEX prefixes_site ON prefixes (server_id, site_id);

-- An IPAM site whose prefixes a folder's ip_ranges follow (set after each sync, through inventory's FolderService).
CREATE TABLE site_mappings (
  server_id uuid NOT NULL REFERENCES servers ON DELETE CASCADE,
  site_id text NOT NULL,
  folder_id uuid NOT NULL,
  PRIMARY KEY (server_id, site_id)
);
CREATE INDEX site_mappings_folder ON site_mappings (folder_id);

-- An overlap marked deliberate for the sites it spanned then; it shows acked while its sites stay within them.
CREATE TABLE overlap_acks (
  key text PRIMARY KEY,
  sites text[] NOT NULL,
  note text,
  acked_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  acked_by text NOT NULL
);
