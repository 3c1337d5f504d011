-- Discovery sweeps: an address range probed by SNMP with candidate credentials, and what answered.

CREATE TABLE sweeps (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  cidr cidr NOT NULL,
  -- UDP port the agents are asked on (161 unless a lab or a test says otherwise).
  port integer NOT NULL DEFAULT 161 CHECK (port BETWEEN 1 AND 65535),
  pool text CHECK (pool ~ '^[A-Za-z0-9_-]{1,63}$'),
  -- inventory credential ids in the caller's order of preference (no foreign key across schemas).
  credential_ids uuid[] NOT NULL CHECK (cardinality(credential_ids) BETWEEN 1 AND 8),
  timeout_ms integer NOT NULL CHECK (timeout_ms BETWEEN 100 AND 10000),
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
  total integer NOT NULL CHECK (total >= 0),
  probed integer NOT NULL DEFAULT 0 CHECK (probed >= 0),
  found integer NOT NULL DEFAULT 0 CHECK (found >= 0),
  error text,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  -- last progress written (a running sweep silent for long was cut off by a restart)
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sweeps_recent_idx ON sweeps (created_at DESC, id DESC);
CREATE INDEX sweeps_running_idx ON sweeps (updated_at) WHERE status = 'running';

CREATE TABLE sweep_results (
  sweep_id uuid NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  address inet NOT NULL,
  sys_name text,
  sys_object_id text,
  sys_descr text,
  credential_id uuid NOT NULL,
  proposed_profile_id uuid,
  vendor text,
  model text,
  found_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (sweep_id, address)
);
