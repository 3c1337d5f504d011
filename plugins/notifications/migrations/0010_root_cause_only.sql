-- A rule that sends only root causes: transitions that are symptoms of an upstream incident (alerts' symptom_of) skip it.
ALTER TABLE routing_rules ADD COLUMN root_cause_only boolean NOT NULL DEFAULT false;
