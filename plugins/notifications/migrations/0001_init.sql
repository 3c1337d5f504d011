-- Channels: a kind, its config (secrets sealed apart), an optional template per lifecycle point.
CREATE TABLE channels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  kind text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  config jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- {"<field>": "sealed:v1:…"}: the kind's secret fields, never answered.
  secrets jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- {"fire": {"subject": …, "body": …}, …}: overrides of the kind's built-in templates; absent points use them.
  template jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX channels_name_key ON channels (lower(name));
CREATE INDEX channels_list ON channels (lower(name), id);

CREATE TABLE routing_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  severity text CHECK (severity IN ('critical', 'warning', 'info')),
  channel_ids uuid[] NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX routing_rules_list ON routing_rules (created_at, id);

-- One row per (alert transition, channel): the unique key is what makes a delivery exactly one, whichever replica
-- saw the transition first. Written before it is sent; the worker claims due rows with a lease.
CREATE TABLE deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  transition_id text NOT NULL,
  channel_id uuid REFERENCES channels (id) ON DELETE SET NULL,
  channel_name text NOT NULL,
  event text NOT NULL CHECK (event IN ('fire', 'resolve', 'suppress')),
  incident_key text NOT NULL,
  severity text NOT NULL,
  alert jsonb NOT NULL,
  test boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sending', 'delivered', 'failed', 'expired')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  lease_until timestamptz,
  -- The replica that last claimed it (host:pid).
  sent_by text,
  last_status integer,
  last_error text,
  last_error_class text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at timestamptz,
  UNIQUE (transition_id, channel_id)
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('queued', 'sending');
CREATE INDEX deliveries_newest ON deliveries (created_at DESC, id DESC);
CREATE INDEX deliveries_channel ON deliveries (channel_id, created_at DESC, id DESC);
CREATE INDEX deliveries_incident ON deliveries (incident_key, created_at DESC, id DESC);

CREATE TABLE delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  ok boolean NOT NULL,
  status integer,
  error_class text,
  error text,
  ms integer NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);

-- What a kind returned for an incident on a channel (a servicedesk record id), for its later deliveries.
CREATE TABLE incident_refs (
  channel_id uuid NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  incident_key text NOT NULL,
  ref text NOT NULL,
  PRIMARY KEY (channel_id, incident_key)
);
