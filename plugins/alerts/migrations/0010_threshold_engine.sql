-- Threshold list keyset (created_at, id) and the engine's lookups of open incidents by check.
CREATE INDEX thresholds_list_idx ON thresholds (created_at, id);
CREATE INDEX active_alerts_check_idx ON active_alerts (check_id);
