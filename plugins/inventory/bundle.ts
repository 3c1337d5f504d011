import { bundleField as f, InvalidBundleRow, isIpAddress, isPoolName, sqlBundleTable, type BundleTable } from "../../core/index.js";

/**
 * The configuration bundle's inventory tables (spec: Configuration bundle): folders, nodes, profiles, classification
 * rules and the URL and DNS checks. Exported page by page in key order; imported with the checks of the API's bodies
 * (a row failing one is skipped: skipped_invalid_value). Credentials are never carried: a node's or URL check's
 * credential_id is a reference, dropped (reference_dropped) where the deployment has no such credential.
 */

type Row = Record<string, unknown>;

/** Labels as the API stores them: trimmed, distinct, at most 64 of 1 to 64 characters (an older object form is read too). */
function tags(row: Row, field: string): string[] {
  const list = [...new Set(f.labels(row, field).map((t) => t.trim()))];
  if (list.length > 64 || list.some((t) => t.length === 0 || t.length > 64))
    throw new InvalidBundleRow(field, `${field} holds at most 64 tags of 1 to 64 characters`);
  return list;
}

function pool(row: Row): string | null {
  const p = f.textOrNull(row, "pool", 63);
  if (p !== null && !isPoolName(p)) throw new InvalidBundleRow("pool", "pool is not a pool name");
  return p;
}

function address(row: Row, field: string, required: boolean): string | null {
  const v = required ? f.text(row, field, 1, 64) : f.textOrNull(row, field, 45);
  if (v !== null && !isIpAddress(v)) throw new InvalidBundleRow(field, `${field} must be an IP address`);
  return v;
}

function parentNotSelf(row: Row, id: string): string | null {
  const parent = f.uuidOrNull(row, "parent_id");
  if (parent === id) throw new InvalidBundleRow("parent_id", "parent_id names the row itself");
  return parent;
}

const nodeGroups = sqlBundleTable({
  name: "node_groups",
  from: "inventory.node_groups",
  select: "id, name, parent_id, group_type, pool, latitude, longitude, sort_order, tags, tags_excluded",
  key: ["id"],
  columns: {
    id: "uuid",
    name: "text",
    parent_id: "uuid",
    group_type: "text",
    pool: "text",
    latitude: "double precision",
    longitude: "double precision",
    sort_order: "double precision",
    tags: "text[]",
    tags_excluded: "text[]",
  },
  updatedAt: true,
  selfRef: "parent_id",
  refs: [{ field: "parent_id", table: "inventory.node_groups", missing: "drop" }],
  prepare(row) {
    const id = f.uuid(row, "id");
    return {
      id,
      name: f.text(row, "name", 1, 200),
      parent_id: parentNotSelf(row, id),
      group_type: f.textOrNull(row, "group_type", 40) || "folder",
      pool: pool(row),
      latitude: f.num(row, "latitude", { min: -90, max: 90, dflt: null }),
      longitude: f.num(row, "longitude", { min: -180, max: 180, dflt: null }),
      sort_order: f.num(row, "sort_order", { dflt: 0 }),
      tags: tags(row, "tags"),
      tags_excluded: tags(row, "tags_excluded"),
    };
  },
});

const profiles = sqlBundleTable({
  name: "profiles",
  from: "inventory.profiles",
  select: "id, name, category, parent_id, vendor, poll_interval_secs",
  key: ["id"],
  columns: { id: "uuid", name: "text", category: "text", parent_id: "uuid", vendor: "text", poll_interval_secs: "integer" },
  updatedAt: true,
  selfRef: "parent_id",
  uniqueName: "name",
  refs: [{ field: "parent_id", table: "inventory.profiles", missing: "drop" }],
  prepare(row) {
    const id = f.uuid(row, "id");
    const name = f.text(row, "name", 1, 200);
    if (!/\S/.test(name)) throw new InvalidBundleRow("name", "name is blank");
    return {
      id,
      name,
      category: f.textOrNull(row, "category", 100),
      parent_id: parentNotSelf(row, id),
      vendor: f.textOrNull(row, "vendor", 200),
      poll_interval_secs: f.num(row, "poll_interval_secs", { min: 10, max: 86400, int: true, dflt: 300 }),
    };
  },
});

const nodes = sqlBundleTable({
  name: "nodes",
  from: "inventory.nodes",
  select:
    "id, name, host(address) AS address, credential_id, group_id, parent_id, profile_id, pool, vendor, model, sort_order, notes, profile_locked, tags, tags_excluded",
  key: ["id"],
  columns: {
    id: "uuid",
    name: "text",
    address: "inet",
    credential_id: "uuid",
    group_id: "uuid",
    parent_id: "uuid",
    profile_id: "uuid",
    pool: "text",
    vendor: "text",
    model: "text",
    sort_order: "double precision",
    notes: "text",
    profile_locked: "boolean",
    tags: "text[]",
    tags_excluded: "text[]",
  },
  updatedAt: true,
  after: ["node_groups", "profiles"],
  selfRef: "parent_id",
  refs: [
    { field: "credential_id", table: "inventory.credentials", missing: "drop" },
    { field: "group_id", table: "inventory.node_groups", missing: "drop" },
    { field: "profile_id", table: "inventory.profiles", missing: "drop" },
    { field: "parent_id", table: "inventory.nodes", missing: "drop" },
  ],
  prepare(row) {
    const id = f.uuid(row, "id");
    const name = f.text(row, "name", 1, 255);
    if (!name.trim()) throw new InvalidBundleRow("name", "name is blank");
    return {
      id,
      name,
      address: address(row, "address", true),
      credential_id: f.uuidOrNull(row, "credential_id"),
      group_id: f.uuidOrNull(row, "group_id"),
      parent_id: parentNotSelf(row, id),
      profile_id: f.uuidOrNull(row, "profile_id"),
      pool: pool(row),
      vendor: f.textOrNull(row, "vendor", 200),
      model: f.textOrNull(row, "model", 200),
      sort_order: f.num(row, "sort_order", { dflt: 0 }),
      notes: f.textOrNull(row, "notes", 4000),
      profile_locked: f.bool(row, "profile_locked", false),
      tags: tags(row, "tags"),
      tags_excluded: tags(row, "tags_excluded"),
    };
  },
});

const OID_PREFIX = /^\.?[0-9]+(\.[0-9]+)*$/;

const classificationRules = sqlBundleTable({
  name: "classification_rules",
  from: "inventory.classification_rules",
  select: "id, enabled, priority, profile_id, sysobjectid_prefix, sysdescr_regex, vendor, model",
  key: ["id"],
  columns: {
    id: "uuid",
    enabled: "boolean",
    priority: "integer",
    profile_id: "uuid",
    sysobjectid_prefix: "text",
    sysdescr_regex: "text",
    vendor: "text",
    model: "text",
  },
  updatedAt: true,
  after: ["profiles"],
  refs: [{ field: "profile_id", table: "inventory.profiles", missing: "skip" }],
  prepare(row) {
    const prefix = f.textOrNull(row, "sysobjectid_prefix", 512);
    const regex = f.textOrNull(row, "sysdescr_regex", 500);
    if (prefix !== null && !OID_PREFIX.test(prefix)) throw new InvalidBundleRow("sysobjectid_prefix", "sysobjectid_prefix is not a dotted OID");
    if (prefix === null && regex === null) throw new InvalidBundleRow("sysobjectid_prefix", "needs sysobjectid_prefix or sysdescr_regex");
    if (regex !== null) {
      try {
        new RegExp(regex);
      } catch {
        throw new InvalidBundleRow("sysdescr_regex", "sysdescr_regex does not compile");
      }
    }
    return {
      id: f.uuid(row, "id"),
      enabled: f.bool(row, "enabled", true),
      priority: f.num(row, "priority", { int: true, min: -2147483648, max: 2147483647, dflt: 100 }),
      profile_id: f.uuid(row, "profile_id"),
      sysobjectid_prefix: prefix,
      sysdescr_regex: regex,
      vendor: f.textOrNull(row, "vendor", 200),
      model: f.textOrNull(row, "model", 200),
    };
  },
});

const URL_METHODS = ["GET", "HEAD", "POST", "PUT", "OPTIONS"] as const;
const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "PTR", "SOA", "SRV", "TXT"] as const;

function expectedStatus(row: Row): unknown {
  const v = f.json(row, "expected_status", { kind: "two_xx" });
  const kind = typeof v === "object" && v !== null ? (v as Row).kind : undefined;
  if (!["two_xx", "exact", "range"].includes(kind as string))
    throw new InvalidBundleRow("expected_status", "expected_status.kind must be two_xx, exact or range");
  return v;
}

function bodyMatch(row: Row): unknown {
  const v = f.json(row, "body_match", null);
  if (v === null) return null;
  const mode = typeof v === "object" ? (v as Row).mode : undefined;
  if (!["contains", "not_contains", "regex"].includes(mode as string))
    throw new InvalidBundleRow("body_match", "body_match.mode must be contains, not_contains or regex");
  return v;
}

function jsonExtract(row: Row): unknown {
  const v = f.json(row, "json_extract", []);
  if (!Array.isArray(v) || v.length > 16) throw new InvalidBundleRow("json_extract", "json_extract must be an array of at most 16 rules");
  return JSON.stringify(v) === "[]" ? [] : v;
}

const urlChecks = sqlBundleTable({
  name: "url_checks",
  from: "inventory.url_checks",
  select: "node_id, url, method, timeout_ms, follow_redirects, verify_tls, expected_status, body_match, body_max_bytes, json_extract, credential_id",
  key: ["node_id"],
  columns: {
    node_id: "uuid",
    url: "text",
    method: "text",
    timeout_ms: "integer",
    follow_redirects: "boolean",
    verify_tls: "boolean",
    expected_status: "jsonb",
    body_match: "jsonb",
    body_max_bytes: "integer",
    json_extract: "jsonb",
    credential_id: "uuid",
  },
  updatedAt: true,
  after: ["nodes"],
  refs: [
    { field: "node_id", table: "inventory.nodes", missing: "skip" },
    { field: "credential_id", table: "inventory.credentials", missing: "drop" },
  ],
  prepare(row) {
    const url = f.text(row, "url", 1, 2048);
    if (!/^https?:\/\//i.test(url)) throw new InvalidBundleRow("url", "url must be http or https");
    return {
      node_id: f.uuid(row, "node_id"),
      url,
      method: f.oneOf(row, "method", URL_METHODS, "GET"),
      timeout_ms: f.num(row, "timeout_ms", { int: true, min: 100, max: 60000, dflt: 5000 }),
      follow_redirects: f.bool(row, "follow_redirects", true),
      verify_tls: f.bool(row, "verify_tls", true),
      expected_status: expectedStatus(row),
      body_match: bodyMatch(row),
      body_max_bytes: f.num(row, "body_max_bytes", { int: true, min: 1024, max: 1048576, dflt: 65536 }),
      json_extract: jsonExtract(row),
      credential_id: f.uuidOrNull(row, "credential_id"),
    };
  },
});

const dnsChecks = sqlBundleTable({
  name: "dns_checks",
  from: "inventory.dns_checks",
  select: "node_id, name, record_type, host(resolver_ip) AS resolver_ip, resolver_port, timeout_ms, max_depth",
  key: ["node_id"],
  columns: { node_id: "uuid", name: "text", record_type: "text", resolver_ip: "inet", resolver_port: "integer", timeout_ms: "integer", max_depth: "integer" },
  updatedAt: true,
  after: ["nodes"],
  refs: [{ field: "node_id", table: "inventory.nodes", missing: "skip" }],
  prepare(row) {
    return {
      node_id: f.uuid(row, "node_id"),
      name: f.text(row, "name", 1, 254),
      record_type: f.oneOf(row, "record_type", DNS_TYPES, "A"),
      resolver_ip: address(row, "resolver_ip", false),
      resolver_port: f.num(row, "resolver_port", { int: true, min: 1, max: 65535, dflt: 53 }),
      timeout_ms: f.num(row, "timeout_ms", { int: true, min: 100, max: 60000, dflt: 2000 }),
      max_depth: f.num(row, "max_depth", { int: true, min: 1, max: 16, dflt: 5 }),
    };
  },
});

export const inventoryBundleTables: BundleTable[] = [nodeGroups, profiles, nodes, classificationRules, urlChecks, dnsChecks];
