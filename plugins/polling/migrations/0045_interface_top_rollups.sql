-- The windowed interface-top (agg avg_15m, max_15m, avg_1h, max_1h) from values kept per interval instead of a scan of
-- every raw sample of the window per request (services/InterfaceTopRollups.ts refreshes them; one row per answer's
-- metric, agg and interface that had samples in the window when they were computed).
CREATE TABLE interface_top_rollups (
  agg text NOT NULL,
  metric text NOT NULL,
  node_id uuid NOT NULL,
  ifindex integer NOT NULL,
  value double precision NOT NULL,
  PRIMARY KEY (agg, metric, node_id, ifindex)
);
-- The ranking walk: highest first for one metric and agg.
CREATE INDEX interface_top_rollups_rank_idx ON interface_top_rollups (agg, metric, value DESC);

-- When the rollups were last computed (one row; none before the first refresh).
CREATE TABLE interface_top_rollup_state (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  computed_at timestamptz NOT NULL
);
