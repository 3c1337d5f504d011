-- Views published for the reports plugin (read-only; named in contract.ts): minute and hour rollups, and AS names and prefixes.
CREATE VIEW report_flows_1m AS
  SELECT at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows FROM rollup_1m;

CREATE VIEW report_flows_1h AS
  SELECT at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows FROM rollup_1h;

CREATE VIEW report_asn_prefixes AS
  SELECT prefix, asn FROM asn_prefixes;

CREATE VIEW report_asn_names AS
  SELECT asn, name FROM asn_names;
