-- Forwarding destinations: where the tee sends a received stream (syslog, trap, flow), with its filter. Secrets
-- (community, service-account key) are sealed apart and never answered.
CREATE TABLE destinations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 120),
  dest_kind text NOT NULL CHECK (dest_kind IN ('syslog_udp', 'syslog_tcp', 'syslog_tls', 'snmp_trap_udp', 'flow_udp', 'warehouse')),
  source_kind text NOT NULL CHECK (source_kind IN ('syslog', 'trap', 'flow')),
  -- host:port as given (a hostname, an IPv4 address or [IPv6]).
  target text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  -- Only what the pollers of this pool received; null = every pool.
  pool text,
  rate_limit_per_sec integer CHECK (rate_limit_per_sec >= 1),
  verbatim boolean NOT NULL DEFAULT true,
  -- PEM certificates trusted besides the system roots; not secret.
  ca_cert text,
  -- "sealed:v1:…" or null.
  community text,
  -- "sealed:v1:…" or null (a warehouse destination without a key authenticates as the platform's ambient identity).
  service_account_json text,
  -- {"mode": "all"|"any", "conditions": [{"field", "op", "value"}]} or null (the whole stream).
  filter jsonb,
  -- 'secret_missing': imported from a bundle without the secret it had; kept disabled until the secret is set.
  disabled_reason text CHECK (disabled_reason IN ('secret_missing')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX destinations_name_key ON destinations (lower(name));
CREATE INDEX destinations_list ON destinations (lower(name), id);
