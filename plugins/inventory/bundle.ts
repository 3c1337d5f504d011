import type { BundleTable, PluginContext } from "../../core/index.js";

/** Column lists of the configuration bundle's records (spec: Configuration bundle). Secrets are never carried. */
const TABLES: Record<string, string> = {
  node_groups: `SELECT id, name, parent_id, group_type, pool, latitude, longitude, sort_order, tags, tags_excluded FROM inventory.node_groups ORDER BY id`,
  nodes: `SELECT id, name, host(address) AS address, credential_id, group_id, parent_id, profile_id, pool, vendor, model, sort_order, notes, profile_locked, tags, tags_excluded FROM inventory.nodes ORDER BY id`,
  profiles: `SELECT id, name, category, parent_id, vendor, poll_interval_secs FROM inventory.profiles ORDER BY id`,
  classification_rules: `SELECT id, enabled, priority, profile_id, sysobjectid_prefix, sysdescr_regex, vendor, model FROM inventory.classification_rules ORDER BY priority, id`,
  url_checks: `SELECT node_id, url, method, timeout_ms, follow_redirects, verify_tls, expected_status, body_match, body_max_bytes, json_extract, credential_id FROM inventory.url_checks ORDER BY node_id`,
  dns_checks: `SELECT node_id, name, record_type, host(resolver_ip) AS resolver_ip, resolver_port, timeout_ms, max_depth FROM inventory.dns_checks ORDER BY node_id`,
};

export const inventoryBundleTables: BundleTable[] = Object.entries(TABLES).map(([name, sql]) => ({
  name,
  export: async (ctx: PluginContext) => (await ctx.store.query(sql)).rows,
}));
