-- Views published for the reports plugin (read-only; named in contract.ts): committed transitions and acks.
CREATE VIEW report_history AS
  SELECT id, recorded_at, at_unix_ms, incident_key, check_id, metric, node_id, severity, state, resolved, subject_kind, subject_name, title
    FROM history;

CREATE VIEW report_acks AS
  SELECT incident_key, severity, node_id, acked_at FROM acks;
