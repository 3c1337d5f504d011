-- Names users give to trap and varbind OIDs (GET/POST/PUT/DELETE /events/trap-names), beside the built-in table in
-- lib/trapNames.ts. One row per OID; a row with a built-in OID takes precedence over the built-in name.
CREATE TABLE trap_names (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  oid text NOT NULL UNIQUE,
  name text NOT NULL,
  kind text NOT NULL DEFAULT 'notification' CHECK (kind IN ('notification', 'object')),
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
