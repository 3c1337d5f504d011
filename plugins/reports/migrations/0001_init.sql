-- Reports: definitions (a spec of sections), schedules (in an IANA zone), runs with their rendered outputs.

CREATE TABLE definitions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  description text,
  spec jsonb NOT NULL CHECK (jsonb_typeof(spec) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX definitions_page ON definitions (created_at, id);

CREATE TABLE schedules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  definition_id uuid NOT NULL REFERENCES definitions (id) ON DELETE CASCADE,
  frequency text NOT NULL CHECK (frequency IN ('daily', 'weekly', 'monthly')),
  at_hour smallint NOT NULL CHECK (at_hour BETWEEN 0 AND 23),
  at_minute smallint NOT NULL CHECK (at_minute BETWEEN 0 AND 59),
  day_of_week smallint CHECK (day_of_week BETWEEN 0 AND 6),
  day_of_month smallint CHECK (day_of_month BETWEEN 1 AND 31),
  enabled boolean NOT NULL DEFAULT true,
  timezone text NOT NULL DEFAULT 'UTC',
  channel_ids uuid[] NOT NULL DEFAULT '{}',
  -- the folders the creator could see (NULL = every folder): what its runs cover
  scope_folders uuid[],
  next_run_at timestamptz,
  last_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (frequency <> 'weekly' OR day_of_week IS NOT NULL),
  CHECK (frequency <> 'monthly' OR day_of_month IS NOT NULL)
);
CREATE INDEX schedules_page ON schedules (created_at, id);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled;
CREATE INDEX schedules_definition ON schedules (definition_id);

-- One rendering of a definition. definition_id is kept (SET NULL) when the definition goes: the run stays readable.
CREATE TABLE runs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  definition_id uuid REFERENCES definitions (id) ON DELETE SET NULL,
  definition_name text NOT NULL,
  schedule_id uuid REFERENCES schedules (id) ON DELETE SET NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  requested_by text NOT NULL,
  -- the folders the run covers (NULL = every folder): the caller's (or the schedule's) scope when it was made
  scope_folders uuid[],
  range_from timestamptz NOT NULL,
  range_to timestamptz NOT NULL,
  spec jsonb NOT NULL,
  channel_ids uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  error text,
  -- per section: {kind, title, ms, data | error}
  data jsonb,
  -- [{format, bytes}] and [{channel_id, delivered, error}]
  outputs jsonb NOT NULL DEFAULT '[]',
  deliveries jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX runs_page ON runs (created_at DESC, id DESC);
CREATE INDEX runs_definition ON runs (definition_id, created_at DESC, id DESC);
CREATE INDEX runs_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE run_outputs (
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  format text NOT NULL CHECK (format IN ('html', 'csv', 'pdf')),
  content bytea NOT NULL,
  PRIMARY KEY (run_id, format)
);
