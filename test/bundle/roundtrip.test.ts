/**
 * The configuration bundle's round trip: a deployment populated through the API is exported, imported into a fresh
 * deployment (a new database), and exported again: equal except exported_at and the notes. The bundle carries no
 * secret (canary strings in credentials, channels and destinations never appear in it), and a dry run writes nothing.
 */
import { analysisPlugin } from "../../plugins/analysis/index.js";
import { reportsPlugin } from "../../plugins/reports/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { BUNDLE_PLUGINS, exportBundle, importBundle, must, note, tableCounts, type Bundle, type Outcome } from "./support.js";

const CANARY = {
  community: "canary-community-5b1e9d",
  authKey: "canary-authkey-77c0aa",
  privKey: "canary-privkey-0f3d21",
  bearer: "canary-bearer-9e8d7c",
  hmac: "canary-hmac-1a2b3c",
  trapCommunity: "canary-trapcommunity-44aa",
  password: "canary-password-6655",
};

/** Every plugin with bundle tables, the reports and analysis schedules included. */
const PLUGINS = [...BUNDLE_PLUGINS, reportsPlugin, analysisPlugin];

let k: TestKernel | undefined;
afterEach(async () => {
  await k?.stop();
  k = undefined;
});

const SPEC_ARRAYS = [
  "analysis_schedules",
  "classification_rules",
  "collection_template_items",
  "collection_templates",
  "dns_checks",
  "event_rules",
  "event_sources",
  "forward_destinations",
  "node_groups",
  "nodes",
  "profile_collection_templates",
  "profiles",
  "report_definitions",
  "report_schedules",
  "thresholds",
  "url_checks",
];

/** What the spec's record table lists for each array (exactly these keys). */
const FIELDS: Record<string, string[]> = {
  node_groups: ["id", "name", "parent_id", "group_type", "pool", "latitude", "longitude", "sort_order", "tags", "tags_excluded"],
  nodes: [
    "id",
    "name",
    "address",
    "credential_id",
    "group_id",
    "parent_id",
    "profile_id",
    "pool",
    "vendor",
    "model",
    "sort_order",
    "notes",
    "profile_locked",
    "tags",
    "tags_excluded",
  ],
  profiles: ["id", "name", "category", "parent_id", "vendor", "poll_interval_secs"],
  collection_templates: ["id", "name", "description"],
  collection_template_items: ["id", "template_id", "collection", "metric_kind", "metric_name", "oid", "enabled"],
  profile_collection_templates: ["profile_id", "template_id"],
  dns_checks: ["node_id", "name", "record_type", "resolver_ip", "resolver_port", "timeout_ms", "max_depth"],
  event_sources: ["id", "kind", "name", "node_id", "enabled"],
  event_rules: [
    "id",
    "name",
    "pattern",
    "match_kind",
    "severity",
    "clear_pattern",
    "enabled",
    "min_count",
    "window_secs",
    "ttl_secs",
    "node_id",
    "source_id",
    "source_kind",
  ],
  thresholds: [
    "id",
    "metric",
    "direction",
    "dwell_samples",
    "scope_level",
    "scope_id",
    "scope_ids",
    "warning",
    "critical",
    "warning_above",
    "warning_below",
    "critical_above",
    "critical_below",
    "row_match",
  ],
  report_definitions: ["id", "name", "description", "spec"],
  report_schedules: ["id", "definition_id", "frequency", "at_hour", "at_minute", "day_of_week", "day_of_month", "enabled"],
  analysis_schedules: [
    "id",
    "tool",
    "scope_kind",
    "scope_label",
    "scope_id",
    "params",
    "frequency",
    "at_hour",
    "at_minute",
    "day_of_week",
    "day_of_month",
    "enabled",
  ],
  forward_destinations: [
    "id",
    "name",
    "dest_kind",
    "source_kind",
    "target",
    "enabled",
    "pool",
    "rate_limit_per_sec",
    "verbatim",
    "ca_cert",
    "filter",
    "had_secret",
  ],
};

async function populate(t: TestKernel): Promise<Record<string, string>> {
  const id = async (path: string, body: unknown) => (await must(t, "POST", path, body)).id as string;
  const v2c = await id("/credentials", { name: "lab v2c", kind: "snmp_v2c", community: CANARY.community });
  await id("/credentials", {
    name: "lab v3",
    kind: "snmp_v3",
    user: "canaryuser",
    security_level: "authPriv",
    auth_protocol: "SHA",
    auth_key: CANARY.authKey,
    priv_protocol: "AES",
    priv_key: CANARY.privKey,
  });
  await id("/notification-channels", {
    name: "hook",
    kind: "webhook",
    config: { url: "http://127.0.0.1:9/hook", bearer_token: CANARY.bearer, hmac_key: CANARY.hmac },
  });
  const root = await id("/node-groups", { name: "Europe", tags: ["region=eu"], latitude: 50.1, longitude: 8.6 });
  const child = await id("/node-groups", { name: "Frankfurt", parent_id: root, tags_excluded: ["region=eu"], pool: "fra", sort_order: 2.5 });
  const parentProfile = await id("/profiles", { name: "Network", category: "net" });
  const profile = await id("/profiles", { name: "Core switch", parent_id: parentProfile, vendor: "Acme", poll_interval_secs: 60 });
  const router = await id("/nodes", {
    name: "fra-core-1",
    address: "192.0.2.1",
    group_id: child,
    profile_id: profile,
    credential_id: v2c,
    vendor: "Acme",
    model: "X1",
  });
  const edge = await id("/nodes", { name: "fra-edge-1", address: "2001:db8::1", group_id: child, parent_id: router, tags: ["edge"], notes: "rack 4" });
  await id("/nodes", { name: "lonely", address: "198.51.100.7" });
  await must(t, "PUT", `/nodes/${router}/url-check`, { url: "https://192.0.2.1/health", timeout_ms: 3000, expected_status: { kind: "exact", code: 204 } });
  await must(t, "PUT", `/nodes/${edge}/dns-check`, { name: "example.net", record_type: "AAAA", resolver_ip: "192.0.2.53" });
  await id("/classification-rules", { profile_id: profile, sysobjectid_prefix: "1.3.6.1.4.1.9999", priority: 5 });
  const template = await id("/collection-templates", { name: "Acme temps", description: "board sensors" });
  await id(`/collection-templates/${template}/items`, { collection: "table", metric_kind: "gauge", metric_name: "acme_temp", oid: "1.3.6.1.4.1.9999.1.2" });
  const link = await t.request("PUT", `/profiles/${profile}/collection-templates/${template}`);
  if (link.status >= 300) throw new Error(`link template: ${link.status} ${JSON.stringify(link.body)}`);
  await id("/thresholds", { metric: "cpu_util", scope_level: "global", direction: "above", warning: 80, critical: 95 });
  await id("/thresholds", {
    metric: "temp_c",
    scope_level: "folder",
    direction: "above",
    scope_ids: [root, child],
    warning_above: 60,
    critical_above: 70,
    dwell_samples: 3,
  });
  await id("/thresholds", {
    metric: "acme_temp",
    scope_level: "profile",
    direction: "above",
    scope_id: profile,
    warning: 50,
    critical: 60,
    row_match: "board*",
  });
  await id("/thresholds", { metric: "if_util", scope_level: "interface", direction: "above", scope_ids: [`${router}:3`], warning: 70, critical: 90 });
  const source = (await must(t, "POST", "/event-sources", { kind: "syslog", name: "core syslog", node_id: router })).id as string;
  const http = await must(t, "POST", "/event-sources", { kind: "http", name: "deploy hook" });
  await id("/event-rules", {
    name: "link down",
    pattern: "LINK-3-UPDOWN",
    match_kind: "substring",
    severity: "warning",
    source_id: source,
    min_count: 2,
    window_secs: 120,
  });
  await id("/event-rules", { name: "reboot", pattern: "reload(ed|ing)? requested", match_kind: "regex", severity: "critical", node_id: router, ttl_secs: 600 });
  await id("/forwarding/destinations", { name: "siem", dest_kind: "syslog_udp", source_kind: "syslog", target: "127.0.0.1:5514" });
  await id("/forwarding/destinations", {
    name: "trap relay",
    dest_kind: "snmp_trap_udp",
    source_kind: "trap",
    target: "127.0.0.1:5162",
    community: CANARY.trapCommunity,
    filter: { mode: "any", conditions: [{ field: "trap_oid", op: "prefix", value: "1.3.6.1.6.3.1.1.5" }] },
  });
  const report = await id("/reports/definitions", {
    name: "Weekly",
    description: "inventory and alerts",
    spec: { range_days: 7, sections: [{ kind: "inventory" }, { kind: "alert_summary" }] },
  });
  await id("/reports/schedules", { definition_id: report, frequency: "weekly", at_hour: 6, at_minute: 30, day_of_week: 1, enabled: true });
  await id("/analysis/schedules", { tool: "flapping", scope_kind: "folder", scope_id: root, frequency: "daily", at_hour: 5, at_minute: 0 });
  return { router, edge, v2c, http: http.id as string, httpToken: http.token as string };
}

function normalised(b: Bundle): Record<string, unknown> {
  const { exported_at: _at, notes: _notes, ...rest } = b;
  return rest;
}

it("round trip: populated deployment → export → fresh deployment → import → export again is equal (but exported_at and notes); no secret anywhere", async () => {
  k = await startTestKernel({ plugins: PLUGINS });
  const ids = await populate(k);
  const first = await exportBundle(k);
  expect(first.status).toBe(200);
  const b = first.bundle;

  // The top level and every array the spec lists; exactly the record fields.
  expect(b.format).toBe("service.config-bundle");
  expect(b.version).toBe(2);
  expect(typeof b.service_version).toBe("string");
  expect(Number.isNaN(Date.parse(b.exported_at as string))).toBe(false);
  expect(b.secrets).toBe("references");
  expect(b.app_settings).toBeNull();
  for (const name of SPEC_ARRAYS) expect(Array.isArray(b[name])).toBe(true);
  for (const [name, fields] of Object.entries(FIELDS)) {
    const rows = b[name] as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(Object.keys(r).sort()).toEqual([...fields].sort());
  }
  expect((b.nodes as unknown[]).length).toBe(3);
  const folderRule = (b.thresholds as Record<string, unknown>[]).find((t) => t.metric === "temp_c")!;
  expect(folderRule.scope_id).toBe((folderRule.scope_ids as string[])[0]);
  expect((folderRule.scope_ids as string[]).length).toBe(2);
  const trapRelay = (b.forward_destinations as Record<string, unknown>[]).find((d) => d.name === "trap relay")!;
  expect(trapRelay.had_secret).toBe(true);
  expect((b.forward_destinations as Record<string, unknown>[]).find((d) => d.name === "siem")!.had_secret).toBe(false);
  // Export notes say what the bundle leaves behind.
  expect(note(b.notes, "forward_destinations", "secret_dropped_imported_disabled", "community")?.count).toBe(1);
  expect(note(b.notes, "event_sources", "webhook_token_reset")?.count).toBe(1);
  expect(note(b.notes, "event_sources", "skipped_builtin")?.count).toBe(2);

  // Secret canary scan: nothing of a credential, channel config, destination secret or ingest token.
  for (const secret of [...Object.values(CANARY), ids.httpToken, "sealed:", "token_hash", "bearer_token", "hmac_key", '"community":'])
    expect(first.text).not.toContain(secret);

  await k.stop();
  k = await startTestKernel({ plugins: PLUGINS });
  const before = await tableCounts(k);

  // A dry run reports what would happen and writes nothing.
  const dry = await importBundle(k, b, "?dry_run=true");
  expect(dry.status).toBe(200);
  const dryOut = dry.body as Outcome;
  expect(dryOut.dry_run).toBe(true);
  expect(dryOut.tables.nodes.created).toBe(3);
  expect(await tableCounts(k)).toEqual(before);

  const imported = await importBundle(k, b);
  expect(imported.status).toBe(200);
  const out = imported.body as Outcome;
  expect(out.ok).toBe(true);
  expect(out.dry_run).toBe(false);
  expect(out.mode).toBe("merge");
  expect(out.tables.nodes).toEqual({ created: 3, updated: 0, skipped: 0, deleted: 0 });
  expect(out.tables.thresholds.created).toBe(4);
  expect(out.tables.event_sources).toEqual({ created: 2, updated: 0, skipped: 2, deleted: 0 });
  // The node's credential is not here (credentials are never carried): the reference is dropped and noted.
  expect(note(out.notes, "nodes", "reference_dropped", "credential_id")?.count).toBe(1);
  expect(note(out.notes, "event_sources", "skipped_builtin")?.count).toBe(2);
  expect(note(out.notes, "event_sources", "webhook_token_reset", "token")?.count).toBe(1);
  expect(note(out.notes, "forward_destinations", "secret_dropped_imported_disabled", "community")?.count).toBe(1);
  expect(note(out.notes, "report_schedules", "schedule_next_run_recomputed")?.count).toBe(1);
  expect(note(out.notes, "analysis_schedules", "schedule_next_run_recomputed")?.count).toBe(1);
  expect(out.tables.report_definitions.created).toBe(1);

  // The destination that had a secret arrived disabled, waiting for it.
  const relay = (await must(k, "GET", `/forwarding/destinations/${trapRelay.id as string}`, undefined, 200)) as Record<string, unknown>;
  expect(relay.enabled).toBe(false);
  expect(relay.disabled_reason).toBe("secret_missing");
  // The http source works with a new token only (the old one is not carried).
  const ingest = (token: string) =>
    fetch(`${k!.url}/api/v1/events/ingest`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ events: [{ message: "hello" }] }),
    });
  expect((await ingest(ids.httpToken)).status).toBe(401);
  const rotated = (await must(k, "POST", `/event-sources/${ids.http}/token`, undefined, 200)).token as string;
  expect((await ingest(rotated)).status).toBe(202);

  // The serving kernel reloaded its caches (threshold engine, event pipeline, forwarding tee) without a failure.
  expect(k.logs.filter((l) => l.includes("reload after import failed"))).toEqual([]);

  const second = await exportBundle(k);
  expect(second.status).toBe(200);
  const again = normalised(second.bundle);
  const expected = normalised(b);
  // The credential reference was dropped on import (the credential stays in the first deployment): the one difference.
  for (const n of expected.nodes as Record<string, unknown>[]) n.credential_id = null;
  // The trap relay now waits for its secret: disabled, still had_secret.
  for (const d of expected.forward_destinations as Record<string, unknown>[]) if (d.had_secret) d.enabled = false;
  expect(again).toEqual(expected);
}, 120000);
