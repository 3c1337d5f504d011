-- Polling: pollers, their gaps, interface state for rate computation, latest values, and a time-partitioned sample history.

CREATE TABLE pollers (
  id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.:-]{1,100}$'),
  pool text NOT NULL CHECK (pool ~ '^[A-Za-z0-9_-]{1,63}$'),
  kind text NOT NULL CHECK (kind IN ('embedded', 'remote')),
  version text,
  listeners text[] NOT NULL DEFAULT '{}',
  registered_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  online boolean NOT NULL DEFAULT true,
  -- host telemetry last reported: cpu_pct, load1, mem_total_bytes, mem_used_bytes, disks [{mount, size_bytes, used_bytes}]
  telemetry jsonb
);
CREATE INDEX pollers_pool_idx ON pollers (pool);

CREATE TABLE monitoring_gaps (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  poller_id text NOT NULL,
  pool text NOT NULL,
  started_at timestamptz NOT NULL,
  ended_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  listeners text[] NOT NULL DEFAULT '{}',
  CHECK (ended_at >= started_at)
);
CREATE INDEX monitoring_gaps_recent_idx ON monitoring_gaps (recorded_at DESC, id DESC);

-- What a poller learned of each interface, and the last counters for rate computation.
CREATE TABLE interfaces (
  node_id uuid NOT NULL,
  ifindex integer NOT NULL,
  if_name text,
  if_alias text,
  if_speed_bps bigint,
  oper_up boolean,
  counter_bits smallint,
  last_counters jsonb,
  last_uptime_ticks bigint,
  last_polled_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (node_id, ifindex)
);

-- Latest value per (node, metric, ifindex or row). -1 stands for "none" in the key columns.
CREATE TABLE latest (
  node_id uuid NOT NULL,
  metric text NOT NULL,
  ifindex integer NOT NULL DEFAULT -1,
  row_key integer NOT NULL DEFAULT -1,
  value double precision NOT NULL,
  at timestamptz NOT NULL,
  if_name text,
  row_name text,
  PRIMARY KEY (node_id, metric, ifindex, row_key)
);
CREATE INDEX latest_metric_idx ON latest (metric, value DESC);

-- Sample history, partitioned by day on `at` (partitions created ahead and dropped by the retention job).
CREATE TABLE samples (
  node_id uuid NOT NULL,
  metric text NOT NULL,
  ifindex integer NOT NULL DEFAULT -1,
  row_key integer NOT NULL DEFAULT -1,
  at timestamptz NOT NULL,
  value double precision NOT NULL
) PARTITION BY RANGE (at);
CREATE INDEX samples_series_idx ON samples (node_id, metric, ifindex, row_key, at);
