import type snmp from "net-snmp";
import type { TableRowReading, TemplateItem } from "../../poller/types.js";
import { normaliseOid } from "../oids.js";
import { type Column, counterBits, toCounterString, toNumber } from "../session.js";

/** A template counter as read: raw (exact decimal) for rate computation, with its width. */
export interface TemplateCounterReading {
  metric: string;
  /** Null for a scalar item; the row (last index component) for a table item. */
  row: number | null;
  row_name: string | null;
  /** Raw counter value, exact decimal. */
  value: string;
  bits: 32 | 64;
}

export interface TemplateReadings {
  /** Scalar items (types.ts shape): gauges as decimal text, counters raw. */
  scalars: { metric: string; kind: "gauge" | "counter"; value: string }[];
  /** Table gauge items, one per row. */
  rows: TableRowReading[];
  /** Every counter item (scalar and table), raw, for counterRate(). */
  counters: TemplateCounterReading[];
}

const INT32_MAX = 2147483647;

/** Scalar OIDs to GET and table column OIDs to walk for these items. */
export function templatePlan(items: TemplateItem[]): { scalars: string[]; columns: string[] } {
  const scalars = new Set<string>();
  const columns = new Set<string>();
  for (const item of items) (item.collection === "scalar" ? scalars : columns).add(normaliseOid(item.oid));
  return { scalars: [...scalars], columns: [...columns] };
}

/** Readings of the template items from the GET answers (by OID) and the walked columns. */
export function readTemplates(items: TemplateItem[], scalarValues: Map<string, snmp.Varbind | null>, columns: Map<string, Column>): TemplateReadings {
  const out: TemplateReadings = { scalars: [], rows: [], counters: [] };
  for (const item of items) {
    const oid = normaliseOid(item.oid);
    if (item.collection === "scalar") {
      const vb = scalarValues.get(oid) ?? null;
      if (item.metric_kind === "counter") {
        const raw = toCounterString(vb);
        if (raw === null) continue;
        out.scalars.push({ metric: item.metric_name, kind: "counter", value: raw });
        out.counters.push({ metric: item.metric_name, row: null, row_name: null, value: raw, bits: counterBits(vb) });
      } else {
        const n = toNumber(vb);
        if (n !== null) out.scalars.push({ metric: item.metric_name, kind: "gauge", value: String(n) });
      }
      continue;
    }
    for (const [idx, vb] of columns.get(oid) ?? new Map<string, snmp.Varbind>()) {
      const last = idx.slice(idx.lastIndexOf(".") + 1);
      const row = Number(last);
      if (!/^[0-9]+$/.test(last) || row > INT32_MAX) continue;
      if (item.metric_kind === "counter") {
        const raw = toCounterString(vb);
        if (raw !== null) out.counters.push({ metric: item.metric_name, row, row_name: null, value: raw, bits: counterBits(vb) });
      } else {
        const n = toNumber(vb);
        if (n !== null) out.rows.push({ metric: item.metric_name, row, row_name: null, value: n });
      }
    }
  }
  return out;
}
