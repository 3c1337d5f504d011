-- View published for the reports plugin (read-only; named in contract.ts): received events with their source and rule outcome.
CREATE VIEW report_events AS
  SELECT e.received_at, e.kind, e.source_id, s.name AS source_name, e.node_id, e.folder_path, e.severity, e.action, e.rule_id
    FROM events e LEFT JOIN sources s ON s.id = e.source_id;
