-- interface-top `latest` of throughput (in + out): a ranking by a sum cannot walk latest_metric_idx (one metric per
-- entry), and a walk of each direction needs ~1,000 entries per direction when in and out rank independently
-- (issue 29: 32 ms at 3,000 nodes x 8 interfaces). latest_pairs keeps, per interface, both stored values as latest
-- holds them, kept by statement triggers on latest (every writer: the poller's upsert, node deletes, tests and benches
-- writing SQL; the functions keep the migration's search_path, this schema). Its rank is an upper bound of what the
-- answer can give the interface (the answer adds only the fresh values, and a negative value only lowers a sum), so a
-- walk down the rank index is exact once the last answer beats the rank where the walk stopped
-- (repositories/MetricsRepository.ts). Each pair kept costs the poller's write of latest about 16 % per pair (bench/
-- http-writes-profile.mjs, poller_flush): errors and discards keep the walk of each direction.

-- Which stored metric is which side of which pair (the answer's metric name, as models/MetricsModels.ts names it;
-- MetricsRepository's LATEST_PAIRS lists the same, a test compares them).
CREATE TABLE latest_pair_metrics (
  metric text PRIMARY KEY,
  pair text NOT NULL,
  side smallint NOT NULL CHECK (side IN (1, 2)),
  UNIQUE (pair, side)
);
INSERT INTO latest_pair_metrics (metric, pair, side) VALUES ('if_in_bps', 'throughput', 1), ('if_out_bps', 'throughput', 2);

CREATE TABLE latest_pairs (
  pair text NOT NULL,
  node_id uuid NOT NULL,
  ifindex integer NOT NULL,
  -- The stored latest value of each side (null: latest has no row for it).
  a double precision,
  b double precision,
  rank double precision GENERATED ALWAYS AS (greatest(coalesce(a, 0), 0) + greatest(coalesce(b, 0), 0)) STORED,
  PRIMARY KEY (pair, node_id, ifindex)
);
CREATE INDEX latest_pairs_rank_idx ON latest_pairs (pair, rank DESC);

INSERT INTO latest_pairs (pair, node_id, ifindex, a, b)
SELECT m.pair, l.node_id, l.ifindex, max(l.value) FILTER (WHERE m.side = 1), max(l.value) FILTER (WHERE m.side = 2)
  FROM latest l JOIN latest_pair_metrics m ON m.metric = l.metric
 WHERE l.ifindex >= 0 AND l.row_key = -1
 GROUP BY m.pair, l.node_id, l.ifindex;

-- Inserted or updated latest rows: one upsert of their pairs per statement (a side absent from the statement keeps
-- its value; latest's key makes each side at most one row of a statement).
CREATE FUNCTION latest_pairs_write() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO latest_pairs AS p (pair, node_id, ifindex, a, b)
  SELECT m.pair, n.node_id, n.ifindex, max(n.value) FILTER (WHERE m.side = 1), max(n.value) FILTER (WHERE m.side = 2)
    FROM latest_new n JOIN latest_pair_metrics m ON m.metric = n.metric
   WHERE n.ifindex >= 0 AND n.row_key = -1
   GROUP BY m.pair, n.node_id, n.ifindex
  ON CONFLICT (pair, node_id, ifindex) DO UPDATE SET a = coalesce(EXCLUDED.a, p.a), b = coalesce(EXCLUDED.b, p.b);
  RETURN NULL;
END
$$;
CREATE TRIGGER latest_pairs_insert AFTER INSERT ON latest REFERENCING NEW TABLE AS latest_new
  FOR EACH STATEMENT EXECUTE FUNCTION latest_pairs_write();
CREATE TRIGGER latest_pairs_update AFTER UPDATE ON latest REFERENCING NEW TABLE AS latest_new
  FOR EACH STATEMENT EXECUTE FUNCTION latest_pairs_write();

-- Deleted latest rows: their sides become null; a pair with neither side left goes.
CREATE FUNCTION latest_pairs_delete() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE latest_pairs p
     SET a = CASE WHEN g.a_gone THEN NULL ELSE p.a END, b = CASE WHEN g.b_gone THEN NULL ELSE p.b END
    FROM (SELECT m.pair, o.node_id, o.ifindex, bool_or(m.side = 1) AS a_gone, bool_or(m.side = 2) AS b_gone
            FROM latest_old o JOIN latest_pair_metrics m ON m.metric = o.metric
           WHERE o.ifindex >= 0 AND o.row_key = -1
           GROUP BY m.pair, o.node_id, o.ifindex) g
   WHERE p.pair = g.pair AND p.node_id = g.node_id AND p.ifindex = g.ifindex;
  DELETE FROM latest_pairs p
   USING (SELECT DISTINCT o.node_id, o.ifindex FROM latest_old o WHERE o.ifindex >= 0 AND o.row_key = -1) g
   WHERE p.node_id = g.node_id AND p.ifindex = g.ifindex AND p.a IS NULL AND p.b IS NULL;
  RETURN NULL;
END
$$;
CREATE TRIGGER latest_pairs_delete AFTER DELETE ON latest REFERENCING OLD TABLE AS latest_old
  FOR EACH STATEMENT EXECUTE FUNCTION latest_pairs_delete();

CREATE FUNCTION latest_pairs_truncate() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  TRUNCATE latest_pairs;
  RETURN NULL;
END
$$;
CREATE TRIGGER latest_pairs_truncate AFTER TRUNCATE ON latest FOR EACH STATEMENT EXECUTE FUNCTION latest_pairs_truncate();
