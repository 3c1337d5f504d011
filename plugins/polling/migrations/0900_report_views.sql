-- Views published for the reports plugin (read-only; named in contract.ts): the sample history and the interfaces as polled.
CREATE VIEW report_samples AS
  SELECT node_id, metric, ifindex, row_key, at, value FROM samples;

CREATE VIEW report_interfaces AS
  SELECT node_id, ifindex, if_name, if_alias, if_speed_bps, oper_up FROM interfaces;
