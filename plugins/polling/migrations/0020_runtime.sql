-- Poller runtime: a sample is stored once per (node, metric, ifindex, row, at), so a batch a remote poller
-- re-sends (its acknowledgement lost in a crash) changes nothing. The unique index replaces the plain series index
-- (same columns, same use by history reads); it includes the partition key, as PostgreSQL requires.
DROP INDEX samples_series_idx;
CREATE UNIQUE INDEX samples_series_key ON samples (node_id, metric, ifindex, row_key, at);

-- Pollers silent past their allowance are found by this (the watch job runs every few seconds).
CREATE INDEX pollers_online_seen_idx ON pollers (last_seen_at) WHERE online;
