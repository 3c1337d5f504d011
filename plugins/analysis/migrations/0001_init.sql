-- Analysis: runs of tools over stored data (jobs), what they found (findings), and schedules that run them.

CREATE TABLE schedules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tool text NOT NULL CHECK (tool ~ '^[a-z][a-z0-9_]{0,62}$'),
  scope_kind text NOT NULL CHECK (scope_kind IN ('all', 'folder', 'node')),
  scope_label text NOT NULL DEFAULT '' CHECK (length(scope_label) <= 200),
  scope_id uuid,
  params jsonb NOT NULL DEFAULT '{}',
  frequency text NOT NULL CHECK (frequency IN ('daily', 'weekly', 'monthly')),
  at_hour integer NOT NULL CHECK (at_hour BETWEEN 0 AND 23),
  at_minute integer NOT NULL CHECK (at_minute BETWEEN 0 AND 59),
  day_of_week integer CHECK (day_of_week BETWEEN 0 AND 6),
  day_of_month integer CHECK (day_of_month BETWEEN 1 AND 31),
  enabled boolean NOT NULL DEFAULT true,
  timezone text NOT NULL DEFAULT 'UTC',
  -- The folders of the account that made it (NULL = unrestricted): a scheduled run of scope all covers only these.
  owner_folders uuid[],
  -- Who may see it: the folder path of its scope target, or owner_folders for scope all ('{}' = unrestricted callers only).
  visible_folders uuid[] NOT NULL DEFAULT '{}',
  next_run_at timestamptz,
  last_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope_kind = 'all') = (scope_id IS NULL)),
  CHECK ((frequency = 'weekly') = (day_of_week IS NOT NULL)),
  CHECK ((frequency = 'monthly') = (day_of_month IS NOT NULL))
);
CREATE INDEX schedules_due_idx ON schedules (next_run_at) WHERE enabled;
CREATE INDEX schedules_list_idx ON schedules (created_at, id);

CREATE TABLE jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tool text NOT NULL,
  scope_kind text NOT NULL CHECK (scope_kind IN ('all', 'folder', 'node')),
  scope_id uuid,
  -- The folders the run is restricted to (NULL = the whole inventory).
  run_folders uuid[],
  visible_folders uuid[] NOT NULL DEFAULT '{}',
  params jsonb NOT NULL DEFAULT '{}',
  schedule_id uuid REFERENCES schedules (id) ON DELETE SET NULL,
  requested_by text,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  progress real NOT NULL DEFAULT 0,
  counts jsonb NOT NULL DEFAULT '{"total": 0, "info": 0, "warning": 0, "critical": 0, "truncated": false}',
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX jobs_created_idx ON jobs (created_at);

CREATE TABLE findings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  tool text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  subject_kind text NOT NULL,
  subject_id text NOT NULL,
  subject_name text NOT NULL,
  node_id uuid,
  ifindex integer,
  folder_id uuid,
  folder_path uuid[] NOT NULL DEFAULT '{}',
  message text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX findings_keyset_idx ON findings (at DESC, id DESC);
CREATE INDEX findings_job_idx ON findings (job_id, at DESC, id DESC);
CREATE INDEX findings_node_idx ON findings (node_id, at DESC, id DESC) WHERE node_id IS NOT NULL;
CREATE INDEX findings_folders_idx ON findings USING gin (folder_path);
