-- Flows plugin: templates shared by every collector, exporters, minute and hour rollups, and the address-to-AS table.

-- v9 / IPFIX templates as learned, keyed like the decoder keys them, so a restarted collector or another replica
-- decodes data at once instead of waiting for the exporter's next template refresh.
CREATE TABLE templates (
  exporter inet NOT NULL,
  version smallint NOT NULL,
  domain bigint NOT NULL,
  template_id integer NOT NULL,
  template jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (exporter, version, domain, template_id)
);

-- Exporters seen: counters added at every flush, the sampling rate last applied.
CREATE TABLE exporters (
  address inet PRIMARY KEY,
  version smallint NOT NULL,
  first_seen timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now(),
  records bigint NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0,
  packets bigint NOT NULL DEFAULT 0,
  sampling integer NOT NULL DEFAULT 1,
  sampling_source text NOT NULL DEFAULT 'none'
);

-- One row per minute and key; a flush adds to it (replicas and restarts add, never overwrite).
-- folder_path: the exporter's node's folders (folder scope); empty when the exporter is no node.
CREATE TABLE rollup_1m (
  at timestamptz NOT NULL,
  exporter inet NOT NULL,
  node_id uuid,
  folder_path uuid[] NOT NULL DEFAULT '{}',
  src inet NOT NULL,
  dst inet NOT NULL,
  proto smallint NOT NULL,
  src_port integer NOT NULL,
  dst_port integer NOT NULL,
  src_as bigint NOT NULL,
  dst_as bigint NOT NULL,
  bytes bigint NOT NULL,
  packets bigint NOT NULL,
  flows bigint NOT NULL,
  PRIMARY KEY (at, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as)
) PARTITION BY RANGE (at);

CREATE TABLE rollup_1h (LIKE rollup_1m INCLUDING DEFAULTS, PRIMARY KEY (at, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as)) PARTITION BY RANGE (at);

-- Address to AS: the longest matching prefix wins. Loaded by `nms flows import-asn` or POST /flow/asn.
CREATE TABLE asn_prefixes (
  prefix cidr PRIMARY KEY,
  asn bigint NOT NULL
);
CREATE INDEX asn_prefixes_gist ON asn_prefixes USING gist (prefix inet_ops);
CREATE TABLE asn_names (
  asn bigint PRIMARY KEY,
  name text NOT NULL
);
