-- Collection templates: OIDs a user adds without code (scalar GETs and table column walks), and
-- which device profiles use them. profile_id references inventory's profiles by value only: a
-- plugin never keys into another plugin's tables.

CREATE TABLE collection_templates (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200 AND name ~ '\S'),
  description text CHECK (description IS NULL OR length(description) <= 2000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- Names are unique regardless of case; the list is ordered (and paged) by this key.
CREATE UNIQUE INDEX collection_templates_name_key ON collection_templates (lower(name));

CREATE TABLE collection_template_items (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  template_id uuid NOT NULL REFERENCES collection_templates (id) ON DELETE CASCADE,
  collection text NOT NULL CHECK (collection IN ('scalar', 'table')),
  metric_kind text NOT NULL CHECK (metric_kind IN ('gauge', 'counter')),
  metric_name text NOT NULL CHECK (metric_name ~ '^[a-z][a-z0-9_]{0,62}$'),
  oid text NOT NULL CHECK (oid ~ '^[0-9]+(\.[0-9]+)+$' AND length(oid) <= 400),
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (template_id, metric_name)
);

CREATE TABLE profile_collection_templates (
  profile_id uuid NOT NULL,
  template_id uuid NOT NULL REFERENCES collection_templates (id) ON DELETE RESTRICT,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (profile_id, template_id)
);
CREATE INDEX profile_collection_templates_template_idx ON profile_collection_templates (template_id);
