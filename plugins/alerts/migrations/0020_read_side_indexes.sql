-- Read side of alerts (routes for active alerts, history, acks, mutes, maintenance windows).

-- GET /mutes: keyset (created_at, id), newest first; the engine's look-up stays on mutes_node_idx.
CREATE INDEX mutes_recent_idx ON mutes (created_at DESC, id DESC);

-- GET /maintenance-windows: keyset (created_at, id), newest first.
CREATE INDEX maintenance_windows_recent_idx ON maintenance_windows (created_at DESC, id DESC);

-- Calendar and top-nodes count fires (resolved = false) over a recent window.
CREATE INDEX history_fires_idx ON history (recorded_at DESC) INCLUDE (node_id) WHERE NOT resolved;
