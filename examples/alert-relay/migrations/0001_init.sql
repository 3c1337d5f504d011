-- Every post to the webhook, kept for GET /alert-relay/deliveries (newest first).
CREATE TABLE deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind text NOT NULL CHECK (kind IN ('fired', 'resolved', 'test')),
  incident_key text,
  severity text,
  ok boolean NOT NULL,
  http_status integer,
  error text
);

CREATE INDEX deliveries_newest ON deliveries (at DESC, id DESC);
