import { Inject, Injectable } from "@tsed/di";
import {
  copyLinesWithDeadLetters,
  insertJournalRanges,
  isoTimestamp,
  pruneJournalRanges,
  storedJournalRanges,
  type CopyOutcome,
  type CopyWithDeadLettersOptions,
  type JournalRange,
  type Queryable,
} from "../../../core/index.js";
import { FLOWS_CONTEXT, type FlowsContext } from "../context.js";
import type { TemplateJson } from "../decode/types.js";
import type { FlowQuery } from "../lib/query.js";
import { STAGING_COLUMNS, type RollupRow } from "./rollupCopy.js";

/** The node an exporter address stands for, as the rollups file it. */
export interface ExporterAttribution {
  exporter: string;
  node_id: string;
  folder_path: readonly string[];
}

export interface ExporterDelta {
  address: string;
  version: number;
  records: number;
  bytes: number;
  packets: number;
  sampling: number;
  sampling_source: string;
}

export interface ConversationRow {
  src: string;
  dst: string;
  src_asn: number;
  dst_asn: number;
  src_as_name: string | null;
  dst_as_name: string | null;
  bytes: number;
  packets: number;
  flows: number;
}

export interface TopAsRow {
  asn: number;
  name: string | null;
  bytes: number;
  packets: number;
  flows: number;
}

export interface ExporterRow {
  address: string;
  node_id: string | null;
  node_name: string | null;
  version: number;
  first_seen: string;
  last_seen: string;
  records: number;
  bytes: number;
  packets: number;
  sampling: number;
  sampling_source: string;
  templates: number;
  records_per_sec: number;
}

/** The effective AS of an address: what the exporter reported, else the longest matching prefix of the table, else 0. */
const effectiveAs = (reported: string, address: string, t: (n: string) => string) =>
  `coalesce(nullif(${reported}, 0), (SELECT ap.asn FROM ${t("asn_prefixes")} ap WHERE ap.prefix >>= ${address} ORDER BY masklen(ap.prefix) DESC LIMIT 1), 0)`;

/** Ranges longer than this read the hour rollups. */
const HOUR_TABLE_ABOVE_SECS = 48 * 3600;

/** One row of the address-to-AS table: a prefix in canonical text (host bits clear), its AS, the AS's name. */
export interface AsnTableEntry {
  prefix: string;
  asn: number;
  name: string | null;
}

/**
 * SQL of the flows plugin: minute rollups added to (never overwritten: replicas and restarts add), hour rollups
 * recomputed from them, exporters, templates, the AS table, and the ranked reads.
 */
@Injectable()
export class FlowRepository {
  @Inject(FLOWS_CONTEXT)
  private ctx: FlowsContext;

  private t = (name: string) => this.ctx.store.table(name);

  async addRollups(rows: readonly RollupRow[], db: Queryable = this.ctx.store): Promise<void> {
    if (!rows.length) return;
    const col = <K extends keyof RollupRow>(k: K) => rows.map((r) => r[k]);
    await db.query(
      `INSERT INTO ${this.t("rollup_1m")} AS r (at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows)
       SELECT timestamptz 'epoch' + u.ms * interval '1 millisecond', u.exporter::inet, u.node_id, u.folder_path::uuid[], u.src::inet, u.dst::inet, u.proto,
              u.src_port, u.dst_port, u.src_as, u.dst_as, u.bytes, u.packets, u.flows
         FROM unnest($1::float8[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::int2[], $8::int4[], $9::int4[], $10::int8[], $11::int8[],
                     $12::int8[], $13::int8[], $14::int8[])
           AS u(ms, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows)
       ON CONFLICT (at, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as) DO UPDATE
         SET bytes = r.bytes + EXCLUDED.bytes, packets = r.packets + EXCLUDED.packets, flows = r.flows + EXCLUDED.flows,
             node_id = EXCLUDED.node_id, folder_path = EXCLUDED.folder_path`,
      [
        col("at_ms"),
        col("exporter"),
        col("node_id"),
        rows.map((r) => `{${r.folder_path.join(",")}}`),
        col("src"),
        col("dst"),
        col("proto"),
        col("src_port"),
        col("dst_port"),
        col("src_as"),
        col("dst_as"),
        col("bytes"),
        col("packets"),
        col("flows"),
      ],
    );
  }

  /**
   * Adds the ingest decoders' minute rollups (COPY text, rollupCopy.ts) to rollup_1m inside the caller's transaction:
   * copied into a staging table (a row PostgreSQL refuses goes to the dead letters; the rest are stored), summed per
   * key (several decoders hold parts of one key), filed under the node each exporter stands for, and added to what is
   * there; the journal ranges they came from are recorded with them, so a replay skips exactly these.
   */
  async storeTaken(
    db: import("pg").ClientBase,
    text: string,
    nodes: readonly ExporterAttribution[],
    ranges: readonly JournalRange[],
    opts: CopyWithDeadLettersOptions,
  ): Promise<CopyOutcome> {
    let outcome: CopyOutcome = { stored: 0, deadLettered: 0 };
    if (text.length) {
      await db.query(
        `CREATE TEMP TABLE IF NOT EXISTS flows_staging (ms float8, exporter inet, src inet, dst inet, proto int2, src_port int4, dst_port int4,
           src_as int8, dst_as int8, bytes int8, packets int8, flows int8) ON COMMIT DELETE ROWS`,
      );
      outcome = await copyLinesWithDeadLetters(db, { table: "flows_staging", columns: STAGING_COLUMNS, target: "flows.rollup_1m" }, text, opts);
      await db.query(
        `INSERT INTO ${this.t("rollup_1m")} AS r (at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows)
         SELECT timestamptz 'epoch' + s.ms * interval '1 millisecond', s.exporter, n.node_id, COALESCE(n.folder_path::uuid[], '{}'), s.src, s.dst, s.proto,
                s.src_port, s.dst_port, s.src_as, s.dst_as, s.bytes, s.packets, s.flows
           FROM (SELECT ms, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
                   FROM flows_staging GROUP BY ms, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as) s
           LEFT JOIN unnest($1::inet[], $2::uuid[], $3::text[]) AS n(exporter, node_id, folder_path) ON n.exporter = s.exporter
         ON CONFLICT (at, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as) DO UPDATE
           SET bytes = r.bytes + EXCLUDED.bytes, packets = r.packets + EXCLUDED.packets, flows = r.flows + EXCLUDED.flows,
               node_id = EXCLUDED.node_id, folder_path = EXCLUDED.folder_path`,
        [nodes.map((n) => n.exporter), nodes.map((n) => n.node_id), nodes.map((n) => `{${n.folder_path.join(",")}}`)],
      );
    }
    await insertJournalRanges(db, this.t("journal_commits"), ranges);
    return outcome;
  }

  /** The ranges of journal `id` stored at or past `from` (a decoder's replay skips them). */
  storedRanges(id: string, from: number): Promise<[number, number][]> {
    return storedJournalRanges(this.ctx.store, this.t("journal_commits"), id, from);
  }

  /** Forgets the ranges of journal `id` wholly below `below` (its checkpoint holds that much). */
  pruneRanges(id: string, below: number): Promise<void> {
    return pruneJournalRanges(this.ctx.store, this.t("journal_commits"), id, below);
  }

  async addExporters(deltas: readonly ExporterDelta[], db: Queryable = this.ctx.store): Promise<void> {
    if (!deltas.length) return;
    const col = <K extends keyof ExporterDelta>(k: K) => deltas.map((d) => d[k]);
    await db.query(
      `INSERT INTO ${this.t("exporters")} AS e (address, version, records, bytes, packets, sampling, sampling_source)
       SELECT u.address::inet, u.version, u.records, u.bytes, u.packets, u.sampling, u.src
         FROM unnest($1::text[], $2::int2[], $3::int8[], $4::int8[], $5::int8[], $6::int4[], $7::text[]) AS u(address, version, records, bytes, packets, sampling, src)
       ON CONFLICT (address) DO UPDATE SET version = EXCLUDED.version, last_seen = now(), records = e.records + EXCLUDED.records,
         bytes = e.bytes + EXCLUDED.bytes, packets = e.packets + EXCLUDED.packets, sampling = EXCLUDED.sampling, sampling_source = EXCLUDED.sampling_source`,
      [col("address"), col("version"), col("records"), col("bytes"), col("packets"), col("sampling"), col("sampling_source")],
    );
  }

  async saveTemplates(templates: readonly TemplateJson[], db: Queryable = this.ctx.store): Promise<void> {
    if (!templates.length) return;
    await db.query(
      `INSERT INTO ${this.t("templates")} (exporter, version, domain, template_id, template, updated_at)
       SELECT u.exporter::inet, u.version, u.domain, u.id, u.template, now()
         FROM unnest($1::text[], $2::int2[], $3::int8[], $4::int4[], $5::jsonb[]) AS u(exporter, version, domain, id, template)
       ON CONFLICT (exporter, version, domain, template_id) DO UPDATE SET template = EXCLUDED.template, updated_at = now()`,
      [
        templates.map((t) => t.exporter),
        templates.map((t) => t.version),
        templates.map((t) => t.domain),
        templates.map((t) => t.id),
        templates.map((t) => JSON.stringify(t)),
      ],
    );
  }

  async deleteTemplates(keys: readonly { exporter: string; version: number; domain: number; id: number }[], db: Queryable = this.ctx.store): Promise<void> {
    if (!keys.length) return;
    await db.query(
      `DELETE FROM ${this.t("templates")} t USING unnest($1::text[], $2::int2[], $3::int8[], $4::int4[]) AS u(exporter, version, domain, id)
        WHERE t.exporter = u.exporter::inet AND t.version = u.version AND t.domain = u.domain AND t.template_id = u.id`,
      [keys.map((k) => k.exporter), keys.map((k) => k.version), keys.map((k) => k.domain), keys.map((k) => k.id)],
    );
  }

  /** Stored templates (every exporter's, or one exporter's). */
  async templates(exporter?: string): Promise<TemplateJson[]> {
    const { rows } = await this.ctx.store.query<{ template: TemplateJson }>(
      `SELECT template FROM ${this.t("templates")} ${exporter ? "WHERE exporter = $1::inet" : ""}`,
      exporter ? [exporter] : [],
    );
    return rows.map((r) => r.template);
  }

  /** Recomputes the hour rollups of the hours touched since `sinceMs` from the minute rollups (idempotent). */
  /**
   * Where the hour rollups must be recomputed from so that no hour is missed: the newest hour already rolled up
   * (it may have been rolled while still filling), or, with no hour rolled yet, the oldest minute row. Null: no rows.
   */
  async rollupResumeMs(): Promise<number | null> {
    const { rows } = await this.ctx.store.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM coalesce((SELECT max(at) FROM ${this.t("rollup_1h")}), (SELECT min(at) FROM ${this.t("rollup_1m")}))) * 1000)::float8 AS ms`,
    );
    return rows[0]?.ms ?? null;
  }

  async rollHours(sinceMs: number): Promise<number> {
    const { rowCount } = await this.ctx.store.query(
      `INSERT INTO ${this.t("rollup_1h")} AS h (at, exporter, node_id, folder_path, src, dst, proto, src_port, dst_port, src_as, dst_as, bytes, packets, flows)
       SELECT date_trunc('hour', at), exporter, max(node_id::text)::uuid, max(folder_path::text)::uuid[], src, dst, proto, src_port, dst_port, src_as, dst_as,
              sum(bytes), sum(packets), sum(flows)
         FROM ${this.t("rollup_1m")}
        WHERE at >= date_trunc('hour', timestamptz 'epoch' + $1 * interval '1 millisecond')
        GROUP BY 1, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as
       ON CONFLICT (at, exporter, src, dst, proto, src_port, dst_port, src_as, dst_as) DO UPDATE
         SET bytes = EXCLUDED.bytes, packets = EXCLUDED.packets, flows = EXCLUDED.flows, node_id = EXCLUDED.node_id, folder_path = EXCLUDED.folder_path`,
      [sinceMs],
    );
    return rowCount ?? 0;
  }

  /** The WHERE of a flow query over a rollup table `r` (time, proto, port, peer, exporter, scope); AS filters apply after the AS lookup. */
  private where(q: FlowQuery, scopeFolders: string[] | null, params: unknown[]): { table: string; where: string } {
    const p = (v: unknown) => `$${params.push(v)}`;
    const hourly = q.toSecs - q.fromSecs > HOUR_TABLE_ABOVE_SECS;
    const w = [`r.at >= to_timestamp(${p(q.fromSecs)})`, `r.at < to_timestamp(${p(q.toSecs)})`];
    if (hourly) w[0] = `r.at >= date_trunc('hour', to_timestamp($1))`;
    if (q.protos) w.push(`r.proto = ANY (${p(q.protos)}::int2[])`);
    if (q.ports) w.push(`r.dst_port = ANY (${p(q.ports)}::int4[])`);
    if (q.peers) {
      const peers = p(q.peers);
      w.push(`(r.src = ANY (${peers}::inet[]) OR r.dst = ANY (${peers}::inet[]))`);
    }
    if (q.exporters) w.push(`r.exporter = ANY (${p(q.exporters)}::inet[])`);
    if (scopeFolders) w.push(`r.folder_path && ${p(scopeFolders)}::uuid[]`);
    return { table: this.t(hourly ? "rollup_1h" : "rollup_1m"), where: w.join(" AND ") };
  }

  /** Conversations and top AS read `ctx.store.read` (a read replica when configured; rollups may be seconds stale). */
  async conversations(q: FlowQuery, scopeFolders: string[] | null): Promise<ConversationRow[]> {
    const params: unknown[] = [];
    const { table, where } = this.where(q, scopeFolders, params);
    const asFilter = q.asns ? `WHERE (g.src_asn = ANY ($${params.push(q.asns)}::int8[]) OR g.dst_asn = ANY ($${params.length}::int8[]))` : "";
    const { rows } = await this.ctx.store.read.query<ConversationRow>(
      `WITH pairs AS (
         SELECT r.src, r.dst, max(r.src_as) AS src_as, max(r.dst_as) AS dst_as, sum(r.bytes) AS bytes, sum(r.packets) AS packets, sum(r.flows) AS flows
           FROM ${table} r WHERE ${where} GROUP BY r.src, r.dst
       ), g AS (
         SELECT p.*, ${effectiveAs("p.src_as", "p.src", this.t)} AS src_asn, ${effectiveAs("p.dst_as", "p.dst", this.t)} AS dst_asn FROM pairs p
       )
       SELECT host(g.src) AS src, host(g.dst) AS dst, g.src_asn::float8 AS src_asn, g.dst_asn::float8 AS dst_asn,
              sn.name AS src_as_name, dn.name AS dst_as_name, g.bytes::float8 AS bytes, g.packets::float8 AS packets, g.flows::float8 AS flows
         FROM g LEFT JOIN ${this.t("asn_names")} sn ON sn.asn = g.src_asn LEFT JOIN ${this.t("asn_names")} dn ON dn.asn = g.dst_asn
         ${asFilter}
        ORDER BY g.bytes DESC, g.packets DESC, g.src, g.dst LIMIT $${params.push(q.limit)}`,
      params,
    );
    return rows;
  }

  async topAs(q: FlowQuery, scopeFolders: string[] | null): Promise<TopAsRow[]> {
    const params: unknown[] = [];
    const { table, where } = this.where(q, scopeFolders, params);
    const side = q.dir === "src" ? "src" : "dst";
    const asFilter = q.asns ? `WHERE g.asn = ANY ($${params.push(q.asns)}::int8[])` : "";
    const { rows } = await this.ctx.store.read.query<TopAsRow>(
      `WITH addrs AS (
         SELECT r.${side} AS addr, max(r.${side}_as) AS reported, sum(r.bytes) AS bytes, sum(r.packets) AS packets, sum(r.flows) AS flows
           FROM ${table} r WHERE ${where} GROUP BY r.${side}
       ), g AS (
         SELECT ${effectiveAs("a.reported", "a.addr", this.t)} AS asn, sum(a.bytes) AS bytes, sum(a.packets) AS packets, sum(a.flows) AS flows FROM addrs a GROUP BY 1
       )
       SELECT g.asn::float8 AS asn, n.name, g.bytes::float8 AS bytes, g.packets::float8 AS packets, g.flows::float8 AS flows
         FROM g LEFT JOIN ${this.t("asn_names")} n ON n.asn = g.asn ${asFilter}
        ORDER BY g.bytes DESC, g.asn LIMIT $${params.push(q.limit)}`,
      params,
    );
    return rows;
  }

  /** Exporters seen, with the records per second of the last five minutes of rollups. */
  async exporters(scopeFolders: string[] | null, directoryView: string): Promise<ExporterRow[]> {
    const { rows } = await this.ctx.store.query<ExporterRow>(
      `SELECT host(e.address) AS address, d.id AS node_id, d.name AS node_name, e.version, ${isoTimestamp("e.first_seen")} AS first_seen,
              ${isoTimestamp("e.last_seen")} AS last_seen, e.records::float8 AS records, e.bytes::float8 AS bytes, e.packets::float8 AS packets,
              e.sampling, e.sampling_source,
              (SELECT count(*) FROM ${this.t("templates")} t WHERE t.exporter = e.address)::int AS templates,
              round(coalesce((SELECT sum(r.flows) FROM ${this.t("rollup_1m")} r WHERE r.exporter = e.address AND r.at >= now() - interval '5 minutes'), 0) / 300.0, 2)::float8
                AS records_per_sec
         FROM ${this.t("exporters")} e
         LEFT JOIN LATERAL (SELECT id, name, folder_path FROM ${directoryView} v WHERE v.address = e.address ORDER BY name, id LIMIT 1) d ON true
        WHERE $1::uuid[] IS NULL OR d.folder_path && $1::uuid[]
        ORDER BY e.address
        LIMIT 10000`,
      [scopeFolders],
    );
    return rows;
  }

  /** Replaces (or adds to) the AS table in one transaction; returns the prefixes and names stored. */
  importAsn(entries: readonly AsnTableEntry[], replace: boolean): Promise<{ prefixes: number; names: number }> {
    return this.importAsnBatches([entries], replace);
  }

  /**
   * Replaces (or adds to) the AS table from batches of entries, all in one transaction: a batch source that throws
   * (a damaged file found half-way) rolls everything back. A prefix given twice keeps its last AS number, an AS
   * number its last name. Returns the prefixes and names written.
   */
  async importAsnBatches(batches: Iterable<readonly AsnTableEntry[]>, replace: boolean): Promise<{ prefixes: number; names: number }> {
    return this.ctx.store.tx(async (db) => {
      if (replace) await db.query(`TRUNCATE ${this.t("asn_prefixes")}, ${this.t("asn_names")}`);
      let prefixes = 0;
      const named = new Map<number, string>();
      for (const batch of batches) {
        // One INSERT … ON CONFLICT cannot touch a row twice: the last entry of a prefix wins within the batch.
        const byPrefix = new Map<string, number>();
        for (const e of batch) {
          byPrefix.delete(e.prefix);
          byPrefix.set(e.prefix, e.asn);
          if (e.name) named.set(e.asn, e.name);
        }
        const { rowCount } = await db.query(
          `INSERT INTO ${this.t("asn_prefixes")} (prefix, asn) SELECT u.prefix::cidr, u.asn FROM unnest($1::text[], $2::int8[]) AS u(prefix, asn)
           ON CONFLICT (prefix) DO UPDATE SET asn = EXCLUDED.asn`,
          [[...byPrefix.keys()], [...byPrefix.values()]],
        );
        prefixes += rowCount ?? 0;
      }
      const { rowCount: names } = await db.query(
        `INSERT INTO ${this.t("asn_names")} (asn, name) SELECT * FROM unnest($1::int8[], $2::text[]) ON CONFLICT (asn) DO UPDATE SET name = EXCLUDED.name`,
        [[...named.keys()], [...named.values()]],
      );
      return { prefixes, names: names ?? 0 };
    });
  }
}
