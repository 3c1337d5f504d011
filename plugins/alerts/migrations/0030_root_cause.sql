-- Root-cause alerts (docs/topology.md): an unreachable incident whose upstream (topology's Upstream path) has an open
-- unreachable incident is its symptom. active_alerts keeps the link while the cause is open; a history row keeps the
-- cause it was announced with (a fire row also when marked later, a clear row when it cleared as a symptom).
ALTER TABLE active_alerts ADD COLUMN cause_incident_key text, ADD COLUMN cause_node_id uuid;
ALTER TABLE history ADD COLUMN cause_incident_key text, ADD COLUMN cause_node_id uuid;
CREATE INDEX active_alerts_cause_idx ON active_alerts (cause_incident_key) WHERE cause_incident_key IS NOT NULL;
