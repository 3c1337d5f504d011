-- Netcloud organizations monitored here, their networks (with the watched flag) and the devices the platform
-- reports, with what the import rule needs to remember: online at least once, and every device ever imported.
CREATE TABLE orgs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- The platform's organization id: one row per organization, whatever key reaches it.
  org_id text NOT NULL UNIQUE CHECK (length(org_id) BETWEEN 1 AND 255),
  name text NOT NULL,
  base_url text NOT NULL,
  -- "sealed:v1:…" (a typed key) or null when credential_id names a stored netcloud_api credential of inventory.
  api_key text,
  credential_id uuid,
  import_devices boolean NOT NULL DEFAULT false,
  file_by_prefix boolean NOT NULL DEFAULT false,
  max_devices integer CHECK (max_devices BETWEEN 1 AND 50000),
  next_sync_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Set while a replica syncs it (a claim that expires, so a crashed sync does not hold it forever).
  sync_started_at timestamptz,
  last_sync_at timestamptz,
  -- 'ok' or the failure kind of the last sync (key_refused, unreachable, timeout, rate_limited, …); never upstream text.
  last_sync_status text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((api_key IS NULL) <> (credential_id IS NULL))
);
CREATE INDEX orgs_list ON orgs (lower(name), id);
CREATE INDEX orgs_due ON orgs (next_sync_at);

CREATE TABLE networks (
  org uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  network_id text NOT NULL,
  name text NOT NULL,
  -- New networks are watched; a known network keeps its flag.
  watched boolean NOT NULL DEFAULT true,
  first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (org, network_id)
);
CREATE INDEX networks_list ON networks (org, lower(name), network_id);

CREATE TABLE devices (
  org uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  serial text NOT NULL,
  name text,
  network_id text,
  model text,
  address inet,
  -- online, offline, alerting, dormant (as the platform says), or null before the first status.
  status text,
  -- Reported online (or alerting: connected, with alerts) at least once.
  ever_online boolean NOT NULL DEFAULT false,
  status_changed_at timestamptz,
  -- The node it is (imported, or a node that already stood at its address); null once that node is deleted.
  node_id uuid,
  -- Set once, never cleared: a device imported (or linked) once is never imported again.
  imported_at timestamptz,
  node_deleted_at timestamptz,
  PRIMARY KEY (org, serial)
);
CREATE INDEX devices_node ON devices (node_id) WHERE node_id IS NOT NULL;
CREATE INDEX devices_candidates ON devices (org) WHERE imported_at IS NULL AND ever_online;
