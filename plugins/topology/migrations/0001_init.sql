-- What each polled node says of itself over LLDP (chassis id, sysName) and the names of its ports: the keys other
-- nodes' neighbour tables are resolved against.
CREATE TABLE node_identity (
  node_id uuid PRIMARY KEY,
  -- lower-case rendering of lldpLocChassisId (null when the node has no LLDP agent)
  chassis_key text,
  sys_name text,
  polled_at timestamptz,
  last_ok_at timestamptz,
  -- 'ok', or why the last walk failed: timeout, auth, error, no_credential
  last_status text,
  polls bigint NOT NULL DEFAULT 0
);
CREATE INDEX node_identity_chassis ON node_identity (chassis_key) WHERE chassis_key IS NOT NULL;
CREATE INDEX node_identity_due ON node_identity (polled_at);

-- Links between two nodes, stored once per unordered pair of ends (a_node < b_node). A port key is the port's
-- name as the protocol gives it, lower-cased (LLDP port id, CDP interface name). *_missed counts the successful
-- polls of that end's node that did not see the link (null: that end never reported it); the link is gone when
-- every end that reported it has missed goneAfterPolls polls.
CREATE TABLE links (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  a_node uuid NOT NULL,
  a_port_key text NOT NULL,
  a_ifindex integer,
  a_port text,
  b_node uuid NOT NULL,
  b_port_key text NOT NULL,
  b_ifindex integer,
  b_port text,
  protocols text[] NOT NULL,
  -- how the far end was resolved the last time: address, chassis_id or sys_name
  resolved_by text NOT NULL,
  state text NOT NULL DEFAULT 'up' CHECK (state IN ('up', 'gone')),
  a_missed integer,
  b_missed integer,
  first_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
  gone_at timestamptz,
  CHECK (a_node < b_node),
  UNIQUE (a_node, a_port_key, b_node, b_port_key)
);
CREATE INDEX links_page ON links (first_seen, id);
CREATE INDEX links_b ON links (b_node);

-- Neighbours a node reports that resolve to no node here (yet): importable as nodes.
CREATE TABLE unknown_neighbors (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  node_id uuid NOT NULL,
  protocol text NOT NULL CHECK (protocol IN ('lldp', 'cdp')),
  local_port_key text NOT NULL,
  local_ifindex integer,
  local_port text,
  remote_key text NOT NULL,
  chassis_id text,
  sys_name text,
  port_key text,
  port text,
  mgmt_addresses text[] NOT NULL DEFAULT '{}',
  platform text,
  state text NOT NULL DEFAULT 'up' CHECK (state IN ('up', 'gone')),
  missed integer NOT NULL DEFAULT 0,
  first_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (node_id, protocol, local_port_key, remote_key)
);
CREATE INDEX unknown_neighbors_page ON unknown_neighbors (first_seen, id);

-- Parents pinned by a person: a pin wins over the parent inferred from the links.
CREATE TABLE pins (
  node_id uuid PRIMARY KEY,
  parent_id uuid NOT NULL,
  pinned_by text NOT NULL,
  pinned_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK (node_id <> parent_id)
);
CREATE INDEX pins_parent ON pins (parent_id);
