/**
 * The configuration bundle's import and the export's limits: refused formats and versions, an older (version 1)
 * bundle read as the spec says, every note code, the row cap, replace mode, dry runs, a failure in the middle that
 * leaves nothing written, and who may call either route.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { injector } from "@tsed/di";
import { BundleService } from "../../core/bundle/BundleService.js";
import { analysisPlugin } from "../../plugins/analysis/index.js";
import { expectError } from "../support/assertions.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { BUNDLE_PLUGINS, bundleOf, exportBundle, importBundle, must, note, tableCounts, type Outcome } from "./support.js";

const MAX_ROWS = 50;
const MAX_DESTINATIONS = 3;
const V1 = JSON.parse(readFileSync(new URL("../fixtures/bundles/v1-basic.json", import.meta.url), "utf8")) as Record<string, unknown>;

let k: TestKernel;

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [...BUNDLE_PLUGINS, analysisPlugin],
    overrides: { bundle: { maxRows: MAX_ROWS }, pluginConfig: { forwarding: { maxDestinations: MAX_DESTINATIONS } } },
  });
}, 60000);
afterAll(async () => {
  await k?.stop();
});

/** Empties every bundle table (built-in event sources stay) so each test starts from a known deployment. */
async function wipe(): Promise<void> {
  const db = k.context("inventory").store;
  await db.query(`DELETE FROM analysis.schedules`);
  await db.query(`DELETE FROM events.rules`);
  await db.query(`DELETE FROM events.sources WHERE NOT builtin`);
  await db.query(`DELETE FROM alerts.thresholds`);
  await db.query(`DELETE FROM forwarding.destinations`);
  await db.query(`DELETE FROM polling.profile_collection_templates`);
  await db.query(`DELETE FROM polling.collection_templates`);
  await db.query(`DELETE FROM inventory.nodes`);
  await db.query(`DELETE FROM inventory.classification_rules`);
  await db.query(`DELETE FROM inventory.node_groups WHERE parent_id IS NOT NULL`);
  await db.query(`DELETE FROM inventory.node_groups`);
  await db.query(`UPDATE inventory.profiles SET parent_id = NULL`);
  await db.query(`DELETE FROM inventory.profiles`);
}
beforeEach(wipe);

const nodeRow = (over: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  name: `n-${randomUUID().slice(0, 8)}`,
  address: "192.0.2.10",
  credential_id: null,
  group_id: null,
  parent_id: null,
  profile_id: null,
  pool: null,
  vendor: null,
  model: null,
  sort_order: 0,
  notes: null,
  profile_locked: false,
  tags: [],
  tags_excluded: [],
  ...over,
});

const destRow = (over: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  name: `d-${randomUUID().slice(0, 8)}`,
  dest_kind: "syslog_udp",
  source_kind: "syslog",
  target: "127.0.0.1:5514",
  enabled: true,
  pool: null,
  rate_limit_per_sec: null,
  verbatim: true,
  ca_cert: null,
  filter: null,
  had_secret: false,
  ...over,
});

describe("top level", () => {
  it("refuses another format, a newer version, a body that is not a bundle and a bad mode (400, nothing written)", async () => {
    const before = await tableCounts(k);
    const arrays = { nodes: [nodeRow()] };
    expectError(await importBundle(k, { ...bundleOf(arrays), format: "other.bundle" }), 400, "bundle_format_unsupported");
    expectError(await importBundle(k, { ...bundleOf(arrays), format: undefined }), 400, "bundle_format_unsupported");
    expectError(await importBundle(k, bundleOf(arrays, 3)), 400, "bundle_version_unsupported");
    expectError(await importBundle(k, { ...bundleOf(arrays), version: "2" }), 400, "bundle_invalid");
    expectError(await importBundle(k, [bundleOf(arrays)]), 400, "bundle_invalid");
    expectError(await importBundle(k, { ...bundleOf(arrays), nodes: { a: 1 } }), 400, "bundle_invalid");
    expectError(await importBundle(k, bundleOf(arrays), "?mode=overwrite"), 400, "validation_failed");
    expectError(await importBundle(k, bundleOf(arrays), "?dry_run=perhaps"), 400, "validation_failed");
    expect(await tableCounts(k)).toEqual(before);
  });

  it("takes mode and dry_run in the body as well as the query", async () => {
    const res = await importBundle(k, { ...bundleOf({ nodes: [nodeRow()] }), dry_run: true, mode: "replace" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, mode: "replace" });
    expect((await tableCounts(k)).nodes).toBe(0);
  });
});

describe("older bundles", () => {
  it("reads a version-1 bundle: no notes, tags in the object form, no profile_locked, tags_excluded, scope_ids, row_match or the four bounds", async () => {
    const res = await importBundle(k, V1);
    expect(res.status).toBe(200);
    const out = res.body as Outcome;
    expect(out.version).toBe(1);
    expect(out.tables.nodes).toEqual({ created: 2, updated: 0, skipped: 0, deleted: 0 });
    expect(out.tables.thresholds.created).toBe(2);
    expect(out.tables.event_rules.created).toBe(1);
    expect(out.notes).toEqual([]);

    const b = (await exportBundle(k)).bundle;
    const nodes = b.nodes as Record<string, unknown>[];
    const sw1 = nodes.find((n) => n.name === "hq-sw-1")!;
    expect(sw1).toMatchObject({ tags: ["role=access", "critical"], tags_excluded: [], profile_locked: false, notes: null });
    expect(nodes.find((n) => n.name === "hq-sw-2")).toMatchObject({ tags: [], parent_id: sw1.id });
    expect((b.node_groups as Record<string, unknown>[]).every((g) => (g.tags as unknown[]).length === 0)).toBe(true);
    const rules = b.thresholds as Record<string, unknown>[];
    // direction + warning + critical is the whole answer; scope_id is the whole target list; every row.
    expect(rules.find((r) => r.metric === "cpu_util")).toMatchObject({
      scope_level: "node",
      scope_id: sw1.id,
      scope_ids: [sw1.id],
      warning_above: 75,
      critical_above: 90,
      warning_below: null,
      critical_below: null,
      row_match: null,
      dwell_samples: 2,
    });
    expect(rules.find((r) => r.metric === "free_mem_pct")).toMatchObject({
      scope_level: "global",
      scope_ids: [],
      warning_below: 20,
      critical_below: 5,
      warning_above: null,
      dwell_samples: 1,
    });
    // Importing it again updates in place (merge by id).
    const again = (await importBundle(k, V1)).body as Outcome;
    expect(again.tables.nodes).toEqual({ created: 0, updated: 2, skipped: 0, deleted: 0 });
  });
});

describe("notes", () => {
  it("says what was dropped or skipped, with every code of the spec", async () => {
    const profile = randomUUID();
    const folder = randomUUID();
    const node = nodeRow({ credential_id: randomUUID(), group_id: randomUUID() });
    const bundle = bundleOf({
      profiles: [{ id: profile, name: "P", category: null, parent_id: randomUUID(), vendor: null, poll_interval_secs: 300 }],
      node_groups: [
        {
          id: folder,
          name: "F",
          parent_id: null,
          group_type: "folder",
          pool: "bad pool!",
          latitude: null,
          longitude: null,
          sort_order: 0,
          tags: [],
          tags_excluded: [],
        },
      ],
      nodes: [node, nodeRow({ address: "not-an-ip" }), nodeRow({ name: "" })],
      classification_rules: [
        {
          id: randomUUID(),
          enabled: true,
          priority: 1,
          profile_id: randomUUID(),
          sysobjectid_prefix: "1.3.6",
          sysdescr_regex: null,
          vendor: null,
          model: null,
        },
      ],
      thresholds: [
        {
          id: randomUUID(),
          metric: "cpu_util",
          direction: "above",
          dwell_samples: 1,
          scope_level: "node",
          scope_id: node.id,
          scope_ids: [node.id, randomUUID()],
          warning: 1,
          critical: 2,
          warning_above: null,
          warning_below: null,
          critical_above: null,
          critical_below: null,
          row_match: null,
        },
        { id: randomUUID(), metric: "cpu_util", direction: "above", scope_level: "folder", scope_id: randomUUID(), warning: 1, critical: 2 },
        { id: randomUUID(), metric: "if_in_octets", direction: "above", scope_level: "global", warning: 1, critical: 2 },
      ],
      event_sources: [
        { id: "5e7a0c1d-2b3f-4a6e-9c8d-000000000514", kind: "syslog", name: "Syslog listeners", node_id: null, enabled: false },
        { id: randomUUID(), kind: "http", name: "hook", node_id: null, enabled: true },
        { id: randomUUID(), kind: "syslog", name: "per node", node_id: randomUUID(), enabled: true },
      ],
      forward_destinations: [destRow({ dest_kind: "snmp_trap_udp", source_kind: "trap", had_secret: true }), destRow({ target: "no port" })],
      analysis_schedules: [
        {
          id: randomUUID(),
          tool: "silent_nodes",
          scope_kind: "all",
          scope_label: "All",
          scope_id: null,
          params: {},
          frequency: "daily",
          at_hour: 6,
          at_minute: 0,
          day_of_week: null,
          day_of_month: null,
          enabled: true,
        },
      ],
      // Informational: notes of the exporting deployment are ignored.
      notes: [{ table: "nodes", code: "reference_dropped", count: 99, field: "x" }],
    });
    const res = await importBundle(k, bundle);
    expect(res.status).toBe(200);
    const { notes, tables } = res.body as Outcome;
    const expected: [string, string, string | null, number][] = [
      ["profiles", "reference_dropped", "parent_id", 1],
      ["node_groups", "skipped_invalid_value", "pool", 1],
      ["nodes", "reference_dropped", "credential_id", 1],
      ["nodes", "reference_dropped", "group_id", 1],
      ["nodes", "skipped_invalid_value", "address", 1],
      ["nodes", "skipped_invalid_value", "name", 1],
      ["classification_rules", "skipped_missing_reference", "profile_id", 1],
      ["thresholds", "reference_dropped", "scope_ids", 2],
      ["thresholds", "skipped_missing_reference", "scope_ids", 1],
      ["thresholds", "skipped_invalid_value", "scope_ids", 1],
      ["event_sources", "skipped_builtin", null, 1],
      ["event_sources", "webhook_token_reset", "token", 1],
      ["event_sources", "reference_dropped", "node_id", 1],
      ["forward_destinations", "secret_dropped_imported_disabled", "community", 1],
      ["forward_destinations", "skipped_invalid_value", "target", 1],
      ["analysis_schedules", "schedule_next_run_recomputed", null, 1],
    ];
    for (const [table, code, field, count] of expected)
      expect({ table, code, field, count: note(notes, table, code, field)?.count }).toEqual({ table, code, field, count });
    expect(notes.every((n) => n.count > 0 && n.field !== "x")).toBe(true);
    expect(tables.nodes).toEqual({ created: 1, updated: 0, skipped: 2, deleted: 0 });
    expect(tables.thresholds).toMatchObject({ created: 1, skipped: 2 });
    expect(tables.event_sources).toMatchObject({ created: 2, skipped: 1 });
    // The built-in source was not touched (still enabled).
    const builtin = await k.context("inventory").store.query(`SELECT enabled FROM events.sources WHERE id = '5e7a0c1d-2b3f-4a6e-9c8d-000000000514'`);
    expect(builtin.rows[0]).toEqual({ enabled: true });
    // The imported threshold keeps the target that exists.
    const rule = await k.context("inventory").store.query(`SELECT scope_ids FROM alerts.thresholds`);
    expect(rule.rows).toEqual([{ scope_ids: [node.id] }]);
  });

  it("refuses a folder whose parent chain loops, and a name another row holds (skipped_invalid_value)", async () => {
    const a = randomUUID();
    const b = randomUUID();
    await must(k, "POST", "/profiles", { name: "Taken" });
    const group = (id: string, parent: string | null, name: string) => ({
      id,
      name,
      parent_id: parent,
      group_type: "folder",
      pool: null,
      latitude: null,
      longitude: null,
      sort_order: 0,
    });
    const res = await importBundle(
      k,
      bundleOf({
        node_groups: [group(a, b, "A"), group(b, a, "B"), group(randomUUID(), null, "C")],
        profiles: [{ id: randomUUID(), name: "taken", category: null, parent_id: null, vendor: null, poll_interval_secs: 300 }],
      }),
    );
    expect(res.status).toBe(200);
    const out = res.body as Outcome;
    expect(note(out.notes, "node_groups", "skipped_invalid_value", "parent_id")?.count).toBe(2);
    expect(note(out.notes, "profiles", "skipped_invalid_value", "name")?.count).toBe(1);
    expect(out.tables.node_groups).toMatchObject({ created: 1, skipped: 2 });
  });
});

describe("snapshot", () => {
  it("the export reads one snapshot: a row written while it streams is not in it, and the next export has it", async () => {
    await importBundle(k, bundleOf({ nodes: [nodeRow({ name: "before" })] }));
    const service = injector().get<BundleService>(BundleService)!;
    const pieces = await service.export();
    await k.context("inventory").store.query(`INSERT INTO inventory.nodes (name, address) VALUES ('during', '192.0.2.98')`);
    let text = "";
    for await (const piece of pieces) text += piece;
    const names = (b: { nodes: { name: string }[] }) => b.nodes.map((n) => n.name).sort();
    expect(names(JSON.parse(text) as { nodes: { name: string }[] })).toEqual(["before"]);
    expect(names((await exportBundle(k)).bundle as unknown as { nodes: { name: string }[] })).toEqual(["before", "during"]);
  });
});

describe("garbage", () => {
  it("rows of the wrong shape in every array are skipped as invalid values, never a 500", async () => {
    const junk = () => [null, 1, "x", [], {}, { id: "not-a-uuid" }, { id: randomUUID(), node_id: randomUUID(), name: 5, metric: [], kind: {}, tags: [1] }];
    const arrays = Object.fromEntries(
      [
        "node_groups",
        "nodes",
        "profiles",
        "classification_rules",
        "url_checks",
        "dns_checks",
        "collection_templates",
        "collection_template_items",
        "profile_collection_templates",
        "thresholds",
        "event_rules",
        "event_sources",
        "forward_destinations",
        "report_definitions",
        "report_schedules",
        "analysis_schedules",
      ].map((n) => [n, junk()]),
    );
    const before = await tableCounts(k);
    const res = await importBundle(k, bundleOf(arrays));
    expect(res.status).toBe(200);
    const out = res.body as Outcome;
    for (const [name, r] of Object.entries(out.tables)) {
      expect({ name, ...r }).toEqual({ name, created: 0, updated: 0, skipped: 7, deleted: 0 });
    }
    expect(out.notes.every((n) => n.code === "skipped_invalid_value")).toBe(true);
    expect(await tableCounts(k)).toEqual(before);
  });
});

describe("row cap", () => {
  it("refuses an import whose array holds more than bundle.maxRows rows (413 bundle_too_large), and an export over it", async () => {
    const nodes = Array.from({ length: MAX_ROWS + 1 }, () => nodeRow());
    expectError(await importBundle(k, bundleOf({ nodes })), 413, "bundle_too_large");
    expect((await tableCounts(k)).nodes).toBe(0);
    expect((await importBundle(k, bundleOf({ nodes: nodes.slice(0, MAX_ROWS) }))).status).toBe(200);
    // Streamed: chunked, no length known up front, JSON.
    const streamed = await fetch(`${k.url}/api/v1/config/bundle`, { headers: { Authorization: `Bearer ${k.adminToken}` } });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("transfer-encoding")).toBe("chunked");
    expect(streamed.headers.get("content-length")).toBeNull();
    expect(streamed.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await streamed.json()) as { nodes: unknown[] }).nodes).toHaveLength(MAX_ROWS);
    await k.context("inventory").store.query(`INSERT INTO inventory.nodes (name, address) VALUES ('one too many', '192.0.2.99')`);
    const res = await fetch(`${k.url}/api/v1/config/bundle`, { headers: { Authorization: `Bearer ${k.adminToken}` } });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("bundle_too_large");
  });
});

describe("modes", () => {
  it("replace deletes the rows the bundle does not name (built-in rows stay; arrays the bundle lacks are left alone); merge keeps them", async () => {
    const keep = nodeRow({ name: "keep" });
    await importBundle(k, bundleOf({ nodes: [keep] }));
    const extra = (await must(k, "POST", "/nodes", { name: "extra", address: "192.0.2.50" })).id as string;
    const rule = (
      await must(k, "POST", "/thresholds", { metric: "cpu_util", scope_level: "node", direction: "above", scope_ids: [extra], warning: 1, critical: 2 })
    ).id as string;
    await must(k, "POST", "/forwarding/destinations", { name: "stays", dest_kind: "syslog_udp", source_kind: "syslog", target: "127.0.0.1:514" });

    const merged = (await importBundle(k, bundleOf({ nodes: [keep], thresholds: [] }))).body as Outcome;
    expect(merged.tables.nodes).toEqual({ created: 0, updated: 1, skipped: 0, deleted: 0 });
    expect((await tableCounts(k)).nodes).toBe(2);

    const dry = (await importBundle(k, bundleOf({ nodes: [keep], thresholds: [], event_sources: [] }), "?mode=replace&dry_run=true")).body as Outcome;
    expect(dry.tables.nodes.deleted).toBe(1);
    expect((await tableCounts(k)).nodes).toBe(2);

    const replaced = (await importBundle(k, bundleOf({ nodes: [keep], thresholds: [], event_sources: [] }), "?mode=replace")).body as Outcome;
    expect(replaced.tables.nodes).toEqual({ created: 0, updated: 1, skipped: 0, deleted: 1 });
    expect(replaced.tables.thresholds.deleted).toBe(1);
    expect(replaced.tables.event_sources.deleted).toBe(0);
    expect(replaced.tables.forward_destinations).toBeUndefined();
    const counts = await tableCounts(k);
    expect(counts).toMatchObject({ nodes: 1, thresholds: 0, event_sources: 2, forward_destinations: 1 });
    expectError(await k.request("GET", `/thresholds/${rule}`), 404, "not_found");
  });

  it("a failure in the middle leaves nothing written: the destination cap after nodes, folders and thresholds were imported", async () => {
    const before = await tableCounts(k);
    const folder = randomUUID();
    const res = await importBundle(
      k,
      bundleOf({
        node_groups: [
          {
            id: folder,
            name: "F",
            parent_id: null,
            group_type: "folder",
            pool: null,
            latitude: null,
            longitude: null,
            sort_order: 0,
            tags: [],
            tags_excluded: [],
          },
        ],
        nodes: [nodeRow({ group_id: folder }), nodeRow()],
        thresholds: [{ id: randomUUID(), metric: "cpu_util", direction: "above", scope_level: "folder", scope_id: folder, warning: 1, critical: 2 }],
        forward_destinations: Array.from({ length: MAX_DESTINATIONS + 1 }, () => destRow()),
      }),
    );
    expectError(res, 400, "too_many_destinations");
    expect(await tableCounts(k)).toEqual(before);
  });
});

describe("access", () => {
  it("needs ManageSystem and an unrestricted account; API tokens and sessions both work; skeleton answers are below", async () => {
    const body = bundleOf({ nodes: [] });
    const get = (token: string | null) => k.request("GET", "/config/bundle", { token });
    const post = (token: string | null) => k.request("POST", "/config/bundle/import?dry_run=true", { token, body });
    expectError(await get(null), 401, "unauthorized");
    expectError(await post(null), 401, "unauthorized");
    expectError(await get("not-a-token"), 401, "unauthorized");
    expectError(await post("not-a-token"), 401, "unauthorized");
    for (const role of ["viewer", "operator"] as const) {
      const token = await k.token(role);
      expectError(await get(token), 403, "permission_denied");
      expectError(await post(token), 403, "permission_denied");
      const session = await k.session(role);
      expectError(await get(session), 403, "permission_denied");
    }
    const folder = (await must(k, "POST", "/node-groups", { name: "scoped" })).id as string;
    const scoped = await k.token("admin", { folders: [folder] });
    expectError(await get(scoped), 403, "scope_unsupported");
    expectError(await post(scoped), 403, "scope_unsupported");
    const scopedSession = await k.session("admin", { folders: [folder] });
    expectError(await post(scopedSession), 403, "scope_unsupported");
    for (const token of [await k.token("admin"), await k.session("admin"), k.adminToken]) {
      expect((await get(token)).status).toBe(200);
      expect((await post(token)).status).toBe(200);
    }
  });
});

describe("skeleton mode", () => {
  it("export and import answer 503 store_unavailable", async () => {
    await k.stop();
    const s = await startTestKernel({ plugins: BUNDLE_PLUGINS, skeleton: true });
    try {
      expectError(await s.request("GET", "/config/bundle"), 503, "store_unavailable");
      expectError(await s.request("POST", "/config/bundle/import", { body: bundleOf({}) }), 503, "store_unavailable");
    } finally {
      await s.stop();
    }
    k = undefined as unknown as TestKernel;
  });
});
