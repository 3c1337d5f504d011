import { bundleField as f, InvalidBundleRow, sqlBundleTable, type BundleTable } from "../../core/index.js";
import { PROFILE_DIRECTORY_VIEW } from "../inventory/contract.js";
import { METRICS, RAW_COUNTER_METRICS } from "./contract.js";
import { ITEM_OID_PATTERN, METRIC_NAME_PATTERN, TEMPLATE_COLLECTIONS, TEMPLATE_METRIC_KINDS } from "./models/CollectionTemplateModels.js";

/**
 * The configuration bundle's collection templates (spec: Configuration bundle): templates, their items and the
 * profile links, with the API's checks on import (a failing row is skipped: skipped_invalid_value).
 */

const BUILT_IN_METRICS: ReadonlySet<string> = new Set(Object.values(METRICS));
const MAX_SUBID = 4294967295;
const MAX_SUBIDS = 128;

const templates = sqlBundleTable({
  name: "collection_templates",
  from: "polling.collection_templates",
  select: "id, name, description",
  key: ["id"],
  columns: { id: "uuid", name: "text", description: "text" },
  updatedAt: true,
  uniqueName: "name",
  prepare(row) {
    const name = f.text(row, "name", 1, 200);
    if (!/\S/.test(name)) throw new InvalidBundleRow("name", "name is blank");
    return { id: f.uuid(row, "id"), name, description: f.textOrNull(row, "description", 2000) };
  },
});

const items = sqlBundleTable({
  name: "collection_template_items",
  from: "polling.collection_template_items",
  select: "id, template_id, collection, metric_kind, metric_name, oid, enabled",
  key: ["id"],
  columns: { id: "uuid", template_id: "uuid", collection: "text", metric_kind: "text", metric_name: "text", oid: "text", enabled: "boolean" },
  updatedAt: true,
  after: ["collection_templates"],
  refs: [{ field: "template_id", table: "polling.collection_templates", missing: "skip" }],
  prepare(row) {
    const metricName = f.text(row, "metric_name", 1, 63);
    if (!METRIC_NAME_PATTERN.test(metricName) || RAW_COUNTER_METRICS.has(metricName) || BUILT_IN_METRICS.has(metricName))
      throw new InvalidBundleRow("metric_name", "metric_name is not a lower-case identifier, or is a built-in metric or raw counter name");
    const given = f.text(row, "oid", 1, 400);
    if (!ITEM_OID_PATTERN.test(given)) throw new InvalidBundleRow("oid", "oid is not a dotted OID");
    const oid = given.replace(/^\./, "");
    const parts = oid.split(".");
    if (parts.length > MAX_SUBIDS || parts.some((p) => p.length > 10 || Number(p) > MAX_SUBID))
      throw new InvalidBundleRow("oid", "oid has too many or too large components");
    return {
      id: f.uuid(row, "id"),
      template_id: f.uuid(row, "template_id"),
      collection: f.oneOf(row, "collection", TEMPLATE_COLLECTIONS),
      metric_kind: f.oneOf(row, "metric_kind", TEMPLATE_METRIC_KINDS),
      metric_name: metricName,
      oid,
      enabled: f.bool(row, "enabled", true),
    };
  },
  // (template_id, metric_name) is unique: a second item of one name in a template is refused like the API does.
  async resolve(rows, imp) {
    const { rows: taken } = await imp.client.query<{ template_id: string; metric_name: string; id: string }>(
      `SELECT template_id::text, metric_name, id::text FROM polling.collection_template_items WHERE template_id = ANY($1::uuid[])`,
      [[...new Set(rows.map((r) => r.template_id))]],
    );
    const holder = new Map(taken.map((t) => [`${t.template_id}/${t.metric_name}`, t.id]));
    const ids = new Set(rows.map((r) => String(r.id)));
    const claimed = new Set<string>();
    let refused = 0;
    const out = rows.filter((r) => {
      const k = `${String(r.template_id)}/${String(r.metric_name)}`;
      const h = holder.get(k);
      // Free, or held by this row or by a row this bundle rewrites anyway; and no earlier row of the bundle took it.
      if (!claimed.has(k) && (h === undefined || h === r.id || ids.has(h))) {
        claimed.add(k);
        return true;
      }
      refused++;
      return false;
    });
    imp.note("skipped_invalid_value", refused, "metric_name");
    return out;
  },
});

const profileTemplates = sqlBundleTable({
  name: "profile_collection_templates",
  from: "polling.profile_collection_templates",
  select: "profile_id, template_id",
  key: ["profile_id", "template_id"],
  columns: { profile_id: "uuid", template_id: "uuid" },
  after: ["collection_templates", "profiles"],
  refs: [
    { field: "profile_id", table: PROFILE_DIRECTORY_VIEW, missing: "skip" },
    { field: "template_id", table: "polling.collection_templates", missing: "skip" },
  ],
  prepare(row) {
    return { profile_id: f.uuid(row, "profile_id"), template_id: f.uuid(row, "template_id") };
  },
});

export const pollingBundleTables: BundleTable[] = [templates, items, profileTemplates];
