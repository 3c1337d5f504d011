-- Alerts: threshold rules, open incidents, their history, acks, mutes, maintenance windows, node states.

CREATE TABLE thresholds (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  metric text NOT NULL CHECK (metric ~ '^[A-Za-z_][A-Za-z0-9_]*$'),
  scope_level text NOT NULL CHECK (scope_level IN ('global', 'profile', 'folder', 'node', 'interface')),
  direction text NOT NULL CHECK (direction IN ('above', 'below')),
  warning double precision,
  critical double precision,
  warning_above double precision,
  critical_above double precision,
  warning_below double precision,
  critical_below double precision,
  dwell_samples integer NOT NULL DEFAULT 1 CHECK (dwell_samples BETWEEN 1 AND 1000),
  -- all targets (profiles, folders, nodes, or one "<node uuid>:<ifindex>"); empty = global
  scope_ids text[] NOT NULL DEFAULT '{}',
  row_match text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX thresholds_metric_idx ON thresholds (metric);

-- Open incidents: one per subject + check (+ port or row); severity moves, ack is per severity.
CREATE TABLE active_alerts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  incident_key text NOT NULL UNIQUE,
  subject_kind text NOT NULL CHECK (subject_kind IN ('node', 'pool', 'netcloud_org')),
  node_id uuid,
  subject_name text,
  check_id uuid NOT NULL,
  metric text,
  ifindex integer,
  if_name text,
  row_key integer,
  row_name text,
  severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  state text NOT NULL CHECK (state IN ('ok', 'warning', 'critical', 'unknown', 'unreachable', 'maintenance')),
  direction text,
  observed_value double precision,
  threshold_value double precision,
  title text,
  fired_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((subject_kind = 'node') = (node_id IS NOT NULL))
);
CREATE INDEX active_alerts_node_idx ON active_alerts (node_id);

-- Every committed fire and clear. Rows of one flush share recorded_at; (recorded_at, id) is the keyset.
CREATE TABLE history (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  at_unix_ms bigint NOT NULL,
  incident_key text NOT NULL,
  check_id uuid NOT NULL,
  direction text,
  ifindex integer,
  if_name text,
  metric text,
  node_id uuid,
  observed_value double precision,
  threshold_value double precision,
  resolved boolean NOT NULL,
  row_key integer,
  row_name text,
  severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  state text NOT NULL CHECK (state IN ('ok', 'warning', 'critical', 'unknown', 'unreachable', 'maintenance')),
  subject_kind text NOT NULL CHECK (subject_kind IN ('node', 'pool', 'netcloud_org')),
  subject_name text,
  title text,
  CHECK ((subject_kind = 'node') = (node_id IS NOT NULL))
);
CREATE INDEX history_keyset_idx ON history (recorded_at DESC, id DESC);
CREATE INDEX history_node_idx ON history (node_id, recorded_at DESC, id DESC);
CREATE INDEX history_incident_idx ON history (incident_key, severity);

-- Ack state of an incident (incident key + severity), shared by all its transitions.
CREATE TABLE acks (
  incident_key text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  node_id uuid,
  acked_by text NOT NULL,
  acked_at timestamptz NOT NULL DEFAULT now(),
  note text,
  PRIMARY KEY (incident_key, severity)
);

CREATE TABLE mutes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  node_id uuid NOT NULL,
  metric_name text NOT NULL,
  reason text NOT NULL,
  until timestamptz NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mutes_node_idx ON mutes (node_id, metric_name, until);

CREATE TABLE maintenance_windows (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  target_kind text NOT NULL CHECK (target_kind IN ('node', 'folder')),
  target_ids uuid[] NOT NULL,
  -- one-off: starts_at/ends_at; recurring: {kind: daily|weekly, weekdays?: [0..6], start: "HH:MM", duration_mins, time_zone}
  starts_at timestamptz,
  ends_at timestamptz,
  recurrence jsonb,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((recurrence IS NULL) = (starts_at IS NOT NULL AND ends_at IS NOT NULL))
);

-- Node state published from the worst open incident (or maintenance).
CREATE TABLE node_states (
  node_id uuid PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('ok', 'warning', 'critical', 'unknown', 'unreachable', 'maintenance')),
  updated_at timestamptz NOT NULL DEFAULT now()
);
