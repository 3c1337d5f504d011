import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { INTERFACE_TOP_METRICS, type HistoryPoint, type InterfaceTopEntry, type NodeInterfaceView, type NodeSeriesView } from "../models/MetricsModels.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

/** "none" in the key columns of latest and samples. */
const NONE = -1;

/**
 * The two-metric answers latest_pairs keeps a rank for (migration 0050; its latest_pair_metrics lists the same), by
 * their stored metrics ("in+out"). Each one costs the poller's writes of latest: errors and discards are not kept.
 */
export const LATEST_PAIRS = new Map([[INTERFACE_TOP_METRICS.throughput.join("+"), "throughput"]]);

export interface TopQuery {
  /** Stored rate metrics added up per interface (one or two). */
  metrics: readonly string[];
  latestMaxAgeSecs: number;
  /** Folder ids of a restricted caller, or null for scope All. */
  folders: string[] | null;
  limit: number;
}

export interface RollupTopQuery {
  /** The answer's metric and agg names (the rollup's keys). */
  metric: string;
  agg: string;
  /** Stored rate metrics of `metric` (the interface must have a latest rate of one of them inside the window). */
  metrics: readonly string[];
  windowSecs: number;
  folders: string[] | null;
  limit: number;
}

/** One rollup the refresh computes: the answer's metric and agg, from these stored metrics over this window. */
export interface RollupSpec {
  metric: string;
  agg: string;
  metrics: readonly string[];
  fn: "avg" | "max";
  secs: number;
}

type TopRow = InterfaceTopEntry & { if_speed_bps: string | number | null };
/** A row of a ranked walk: an answer's entry (all null when there is none) with the walk's bound and whether it ran out. */
type WalkRow = TopRow & { bound: number; exhausted: boolean };

export interface HistoryQuery {
  nodeId: string;
  metric: string;
  ifindex: number;
  row: number;
  fromMs: number;
  toMs: number;
  /** Bucket width in seconds, or null for raw samples. */
  step: number | null;
  /** Rows fetched at most (raw: the cap plus one, to tell "too many"). */
  limit: number;
}

const TS = (ms: string) => `timestamptz 'epoch' + ${ms}::bigint * interval '1 millisecond'`;

/** SQL for the metric reads: polling.latest, polling.samples and polling.interfaces, filtered through inventory's published node directory. */
@Injectable()
export class MetricsRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  private t(name: string): string {
    return this.ctx.store.table(name);
  }

  /** The caller's view of the node directory joined to `alias`'s node_id (the folder filter when scoped). */
  private visible(alias: string): string {
    return `JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = ${alias}.node_id AND ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])`;
  }

  /**
   * Interfaces ranked by the sum of their latest `metrics`, exactly as grouping every interface of the table would
   * rank them, without grouping them all: a threshold walk (Fagin's). Per metric, the `k` highest fresh rates through
   * latest_metric_idx; their interfaces are the candidates, summed exactly. An interface outside the candidates has
   * each metric at most that metric's k-th rate (or none when the walk ran out), so once the last answer beats the
   * sum of those bounds strictly, no outsider can enter or tie the answer; otherwise `k` grows, and at last every
   * interface is a candidate.
   */
  async interfaceTopLatest(q: TopQuery): Promise<InterfaceTopEntry[]> {
    const pair = LATEST_PAIRS.get(q.metrics.join("+"));
    if (pair !== undefined) return this.interfaceTopPair(q, pair);
    // For scope All the walks skip the directory: a superset of the visible rates bounds the outsiders just as well.
    const walkJoin = q.folders === null ? "" : this.visible("l");
    const kParam = `$${4 + q.metrics.length}`;
    const walks = q.metrics.map(
      (_, i) => `c${i} AS (
         SELECT l.node_id, l.ifindex, l.value, l.if_name FROM ${this.t("latest")} l ${walkJoin}
          WHERE l.metric = $${4 + i} AND l.ifindex >= 0 AND l.row_key = ${NONE} AND l.at >= now() - make_interval(secs => $3)
          ORDER BY l.value DESC LIMIT ${kParam})`,
    );
    const bounds = q.metrics.map((_, i) => `(SELECT CASE WHEN count(*) < ${kParam} THEN NULL ELSE min(value) END FROM c${i})`);
    // A candidate's rates: what the walks saw, and one look-up of the primary key for each metric a walk did not reach.
    const parts = q.metrics.flatMap((_, i) => [
      `SELECT node_id, ifindex, value, if_name FROM c${i}`,
      ...q.metrics.map((__, j) =>
        j === i
          ? ""
          : // LATERAL … LIMIT 1: one probe of the primary key per candidate, whatever the planner guesses of k.
            `SELECT c${i}.node_id, c${i}.ifindex, l.value, l.if_name FROM c${i}
               CROSS JOIN LATERAL (
                 SELECT l.value, l.if_name FROM ${this.t("latest")} l
                  WHERE l.node_id = c${i}.node_id AND l.metric = $${4 + j} AND l.ifindex = c${i}.ifindex AND l.row_key = ${NONE}
                    AND l.at >= now() - make_interval(secs => $3)
                  LIMIT 1
               ) l
              WHERE NOT EXISTS (SELECT 1 FROM c${j} WHERE c${j}.node_id = c${i}.node_id AND c${j}.ifindex = c${i}.ifindex)`,
      ),
    ]);
    const boundSelect = `${bounds.map((b) => `coalesce(greatest(${b}, 0), 0)`).join(" + ")} AS bound, ${bounds.map((b) => `${b} IS NULL`).join(" AND ")} AS exhausted`;
    const sql = `WITH ${walks.join(", ")},
       val AS (
         SELECT node_id, ifindex, sum(value) AS value, max(if_name) AS latest_if_name
           FROM (${parts.filter(Boolean).join(" UNION ALL ")}) x
          GROUP BY node_id, ifindex
       ), ${this.topOfVal(boundSelect)}`;
    return this.walkUntilExact(`latest:${q.metrics.join("+")}`, q.limit, (k) =>
      this.ctx.store.query<WalkRow>(sql, [q.folders, q.limit, q.latestMaxAgeSecs, ...q.metrics, k]),
    );
  }

  /**
   * A two-metric sum kept in latest_pairs (throughput) by a walk down its rank index (migration 0050): the k
   * highest ranks, each candidate's fresh rates read by the primary key and added up as the one-table ranking adds
   * them. A rank bounds what the answer can give its interface (both stored values, negatives as 0), so an interface
   * the walk left out gives at most the k-th rank: once the last answer beats it strictly, the answer is exact (else
   * k grows). When in and out rank independently, a walk of each direction needed ~1,000 entries per direction.
   */
  private async interfaceTopPair(q: TopQuery, pair: string): Promise<InterfaceTopEntry[]> {
    // For scope All the walk skips the directory: a superset of the visible interfaces bounds the outsiders as well.
    const walkJoin = q.folders === null ? "" : this.visible("p");
    const sql = `WITH c AS (
         SELECT p.node_id, p.ifindex, p.rank FROM ${this.t("latest_pairs")} p ${walkJoin}
          WHERE p.pair = $4 ORDER BY p.rank DESC LIMIT $6
       ), val AS (
         SELECT c.node_id, c.ifindex, x.value, x.latest_if_name FROM c
          CROSS JOIN LATERAL (
            SELECT sum(l.value) AS value, max(l.if_name) AS latest_if_name FROM ${this.t("latest")} l
             WHERE l.node_id = c.node_id AND l.metric = ANY ($5::text[]) AND l.ifindex = c.ifindex AND l.row_key = ${NONE}
               AND l.at >= now() - make_interval(secs => $3)
            HAVING count(*) > 0
          ) x
       ), ${this.topOfVal("coalesce(min(rank), 0) AS bound, count(*) < $6 AS exhausted FROM c")}`;
    // A rank is the answer's value itself when both rates are fresh and not negative (the usual case), so a shallow
    // first walk mostly suffices: 2 × limit, at least 32 (each candidate costs two primary-key probes).
    return this.walkUntilExact(
      `pair:${pair}`,
      q.limit,
      (k) => this.ctx.store.query<WalkRow>(sql, [q.folders, q.limit, q.latestMaxAgeSecs, pair, q.metrics, k]),
      Math.max(32, q.limit * 2),
    );
  }

  /**
   * The end of a walk's ranking query, after a `val` CTE (node_id, ifindex, value, latest_if_name): the visible top
   * $2 with their names, and beside them the walk's `bound` and `exhausted` as `boundSelect` computes them.
   */
  private topOfVal(boundSelect: string): string {
    return `top AS (
         SELECT val.node_id, d.name AS node_name, val.ifindex, coalesce(i.if_name, val.latest_if_name) AS if_name,
                i.if_alias, i.if_speed_bps, val.value
           FROM val ${this.visible("val")}
           LEFT JOIN ${this.t("interfaces")} i ON i.node_id = val.node_id AND i.ifindex = val.ifindex
          ORDER BY val.value DESC, d.name, val.node_id, val.ifindex
          LIMIT $2
       )
       SELECT top.*, b.bound, b.exhausted
         FROM (SELECT ${boundSelect}) b
         LEFT JOIN top ON true
        ORDER BY top.value DESC, top.node_name, top.node_id, top.ifindex`;
  }

  /**
   * The windowed ranking from interface_top_rollups: a walk down its rank index (the k highest), keeping the
   * interfaces with a latest rate of one of the metrics inside the window (as the raw-sample form did) and visible to
   * the caller; exact once the last answer beats the k-th value walked (else k grows, as for latest).
   */
  async interfaceTopRollup(q: RollupTopQuery): Promise<InterfaceTopEntry[]> {
    const sql = `WITH c AS (
         SELECT r.node_id, r.ifindex, r.value FROM ${this.t("interface_top_rollups")} r
          WHERE r.agg = $5 AND r.metric = $6 ORDER BY r.value DESC LIMIT $7
       ), top AS (
         SELECT c.node_id, d.name AS node_name, c.ifindex, coalesce(i.if_name, ln.if_name) AS if_name, i.if_alias, i.if_speed_bps, c.value
           FROM c ${this.visible("c")}
           JOIN LATERAL (
             SELECT max(l.if_name) AS if_name FROM ${this.t("latest")} l
              WHERE l.node_id = c.node_id AND l.metric = ANY ($2::text[]) AND l.ifindex = c.ifindex AND l.row_key = ${NONE}
                AND l.at >= now() - make_interval(secs => $4)
             HAVING count(*) > 0
           ) ln ON true
           LEFT JOIN ${this.t("interfaces")} i ON i.node_id = c.node_id AND i.ifindex = c.ifindex
          ORDER BY c.value DESC, d.name, c.node_id, c.ifindex
          LIMIT $3
       )
       SELECT top.*, b.bound, b.exhausted
         FROM (SELECT coalesce(min(value), 0) AS bound, count(*) < $7 AS exhausted FROM c) b LEFT JOIN top ON true
        ORDER BY top.value DESC, top.node_name, top.node_id, top.ifindex`;
    return this.walkUntilExact(`${q.agg}:${q.metric}`, q.limit, (k) =>
      this.ctx.store.query<WalkRow>(sql, [q.folders, q.metrics, q.limit, q.windowSecs, q.agg, q.metric, k]),
    );
  }

  /** Per ranking, the walk depth that last gave an exact answer (where the next walk starts). */
  private readonly depth = new Map<string, number>();

  /**
   * Runs a ranked walk of depth k (where the last exact one of this ranking stood; `first`, by default 8 × limit and
   * at least 256, at first), × 4 until its answer is exact: the walk ran out (it saw everything), or the answer is full and its last
   * value is above the bound of what the walk left out. Past 16,384 the walk has no depth (LIMIT NULL: everything),
   * so it always ends.
   */
  private async walkUntilExact(
    ranking: string,
    limit: number,
    walk: (k: number | null) => Promise<{ rows: WalkRow[] }>,
    first = Math.max(256, limit * 8),
  ): Promise<InterfaceTopEntry[]> {
    for (let k: number | null = Math.max(first, this.depth.get(ranking) ?? 0); ; k = k !== null && k < 16384 ? k * 4 : null) {
      const { rows } = await walk(k);
      const entries = rows.filter((r) => r.node_id !== null).map(topEntry);
      const { bound, exhausted } = rows[0]!;
      if (k === null || exhausted || (entries.length === limit && entries[entries.length - 1]!.value > bound)) {
        if (k !== null) this.depth.set(ranking, k);
        return entries;
      }
    }
  }

  /** When the rollups were last computed (Unix ms, by the database's clock), and the database's clock now; null = never. */
  async rollupAge(): Promise<{ computedMs: number | null; nowMs: number }> {
    const { rows } = await this.ctx.store.query<{ computed_ms: number | null; now_ms: number }>(
      `SELECT (SELECT (extract(epoch FROM computed_at) * 1000)::float8 FROM ${this.t("interface_top_rollup_state")}) AS computed_ms,
              (extract(epoch FROM now()) * 1000)::float8 AS now_ms`,
    );
    return { computedMs: rows[0]!.computed_ms, nowMs: rows[0]!.now_ms };
  }

  /**
   * Recomputes every rollup from the raw samples of the longest window, in one transaction (readers keep the previous
   * values until it commits). `wait` false: skip (false) when another replica or request is computing them now; with
   * `wait`, queue behind it and skip when what it computed is younger than `freshMs`. True when this call computed.
   */
  async refreshRollups(specs: readonly RollupSpec[], wait: boolean, freshMs: number): Promise<boolean> {
    const metrics = [...new Set(specs.flatMap((s) => s.metrics))];
    const longest = Math.max(...specs.map((s) => s.secs));
    const pairs = specs.filter((s) => s.fn === "max" && s.metrics.length > 1);
    // Per poll (samples of one poll share `at`) the sum of a multi-metric answer, for its maxima.
    const pairGroup = pairs.length
      ? `CASE ${[...new Map(pairs.map((s) => [s.metric, s.metrics])).entries()]
          .map(([m, ms]) => `WHEN metric IN (${ms.map((x) => `'${x}'`).join(", ")}) THEN '${m}'`)
          .join(" ")} END`
      : "NULL::text";
    const windows = [...new Set(specs.map((s) => s.secs))];
    const inWindow = (secs: number) => `at >= now() - interval '${secs} seconds'`;
    // Per series (one pass): average and maximum of each window; per poll group: the largest sum of one poll.
    const perSeries = windows.map((w) => `avg(value) FILTER (WHERE ${inWindow(w)}) AS a${w}, max(value) FILTER (WHERE ${inWindow(w)}) AS m${w}`).join(", ");
    const perPoll = windows.map((w) => `max(v) FILTER (WHERE ${inWindow(w)}) AS m${w}`).join(", ");
    const selects = specs.map((s) => {
      const list = s.metrics.map((x) => `'${x}'`).join(", ");
      // avg: the per-metric averages added up (a direction without samples in the window adds nothing).
      if (s.fn === "avg") {
        return `SELECT '${s.agg}', '${s.metric}', node_id, ifindex, sum(a${s.secs}) FROM pm WHERE metric IN (${list})
                 GROUP BY node_id, ifindex HAVING sum(a${s.secs}) IS NOT NULL`;
      }
      if (s.metrics.length === 1)
        return `SELECT '${s.agg}', '${s.metric}', node_id, ifindex, m${s.secs} FROM pm WHERE metric = ${list} AND m${s.secs} IS NOT NULL`;
      return `SELECT '${s.agg}', '${s.metric}', node_id, ifindex, m${s.secs} FROM pp WHERE grp = '${s.metric}' AND m${s.secs} IS NOT NULL`;
    });
    return this.ctx.store.tx(async (db) => {
      const lock = "hashtext('polling.interface_top_rollups')";
      if (!wait) {
        const { rows } = await db.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${lock}) AS ok`);
        if (!rows[0]!.ok) return false;
      } else {
        await db.query(`SELECT pg_advisory_xact_lock(${lock})`);
        // Whoever held the lock may have just computed them (clock_timestamp: this transaction's now() predates the wait).
        const { rows } = await db.query<{ fresh: boolean }>(
          `SELECT computed_at > clock_timestamp() - make_interval(secs => $1) AS fresh FROM ${this.t("interface_top_rollup_state")}`,
          [freshMs / 1000],
        );
        if (rows[0]?.fresh) return false;
      }
      await db.query(`DELETE FROM ${this.t("interface_top_rollups")}`);
      await db.query(
        `WITH s AS MATERIALIZED (
           SELECT node_id, ifindex, metric, at, value FROM ${this.t("samples")}
            WHERE at >= now() - interval '${longest} seconds' AND ifindex >= 0 AND row_key = ${NONE} AND metric = ANY ($1::text[])
         ), pm AS (
           SELECT node_id, ifindex, metric, ${perSeries} FROM s GROUP BY 1, 2, 3
         ), pp AS (
           SELECT node_id, ifindex, grp, ${perPoll}
             FROM (SELECT node_id, ifindex, ${pairGroup} AS grp, at, sum(value) AS v FROM s GROUP BY 1, 2, 3, 4) polls
            WHERE grp IS NOT NULL GROUP BY 1, 2, 3
         )
         INSERT INTO ${this.t("interface_top_rollups")} (agg, metric, node_id, ifindex, value)
         ${selects.join(" UNION ALL ")}`,
        [metrics],
      );
      await db.query(
        `INSERT INTO ${this.t("interface_top_rollup_state")} (computed_at) VALUES (now()) ON CONFLICT (one) DO UPDATE SET computed_at = excluded.computed_at`,
      );
      return true;
    });
  }

  /** Whether the node exists and the caller's folders (null = all) cover it. */
  async nodeVisible(nodeId: string, folders: string[] | null): Promise<boolean> {
    const { rows } = await this.ctx.store.query(
      `SELECT 1 FROM ${NODE_DIRECTORY_VIEW} d WHERE d.id = $1 AND ($2::uuid[] IS NULL OR d.folder_path && $2::uuid[])`,
      [nodeId, folders],
    );
    return rows.length > 0;
  }

  /** A node's interfaces with their latest rates, by ifindex. */
  async nodeInterfaces(nodeId: string): Promise<NodeInterfaceView[]> {
    const rate = (metric: string) => `max(l.value) FILTER (WHERE l.metric = '${metric}')`;
    const { rows } = await this.ctx.store.query<NodeInterfaceView & { if_speed_bps: string | number | null }>(
      `SELECT i.ifindex, coalesce(i.if_name, max(l.if_name)) AS if_name, i.if_alias, i.if_speed_bps, i.oper_up,
              ${rate("if_in_bps")} AS in_bps, ${rate("if_out_bps")} AS out_bps,
              ${rate("if_in_errors_ps")} AS in_errors_ps, ${rate("if_out_errors_ps")} AS out_errors_ps,
              ${rate("if_in_discards_ps")} AS in_discards_ps, ${rate("if_out_discards_ps")} AS out_discards_ps,
              ${rate("if_util_in_pct")} AS util_in_pct, ${rate("if_util_out_pct")} AS util_out_pct,
              ${isoTimestamp("max(l.at)")} AS rates_at, ${isoTimestamp("i.last_polled_at")} AS last_polled_at
         FROM ${this.t("interfaces")} i
         LEFT JOIN ${this.t("latest")} l ON l.node_id = i.node_id AND l.ifindex = i.ifindex AND l.row_key = ${NONE}
              AND l.metric IN ('if_in_bps', 'if_out_bps', 'if_in_errors_ps', 'if_out_errors_ps', 'if_in_discards_ps',
                               'if_out_discards_ps', 'if_util_in_pct', 'if_util_out_pct')
        WHERE i.node_id = $1
        GROUP BY i.node_id, i.ifindex
        ORDER BY i.ifindex`,
      [nodeId],
    );
    return rows.map((r) => ({ ...r, if_speed_bps: r.if_speed_bps === null ? null : Number(r.if_speed_bps) }));
  }

  /** One series in [from, to): raw samples, or buckets of `step` seconds aligned to the epoch. */
  async history(q: HistoryQuery): Promise<HistoryPoint[]> {
    const where = `node_id = $1 AND metric = $2 AND ifindex = $3 AND row_key = $4 AND at >= ${TS("$5")} AND at < ${TS("$6")}`;
    const base = [q.nodeId, q.metric, q.ifindex, q.row, q.fromMs, q.toMs, q.limit];
    if (q.step === null) {
      const { rows } = await this.ctx.store.query<HistoryPoint>(
        `SELECT ${isoTimestamp("at")} AS at, value, value AS min, value AS max, 1 AS count
           FROM ${this.t("samples")} WHERE ${where} ORDER BY at LIMIT $7`,
        base,
      );
      return rows;
    }
    const { rows } = await this.ctx.store.query<HistoryPoint & { count: string | number }>(
      `SELECT ${isoTimestamp("b")} AS at, avg AS value, min, max, count
         FROM (SELECT date_bin(make_interval(secs => $8), at, timestamptz 'epoch') AS b,
                      avg(value) AS avg, min(value) AS min, max(value) AS max, count(*) AS count
                 FROM ${this.t("samples")} WHERE ${where}
                GROUP BY 1) g
        ORDER BY b LIMIT $7`,
      [...base, q.step],
    );
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  }

  /** A node's series in polling.latest (its primary key leads with node_id), optionally one metric only. */
  async nodeSeries(nodeId: string, metric: string | null): Promise<NodeSeriesView[]> {
    const { rows } = await this.ctx.store.query<NodeSeriesView>(
      `SELECT metric, nullif(ifindex, ${NONE}) AS ifindex, nullif(row_key, ${NONE}) AS row, coalesce(if_name, row_name) AS name, value, ${isoTimestamp("at")} AS at
         FROM ${this.t("latest")} WHERE node_id = $1 AND ($2::text IS NULL OR metric = $2)
        ORDER BY metric, ifindex, row_key`,
      [nodeId, metric],
    );
    return rows;
  }
}

const topEntry = (r: TopRow): InterfaceTopEntry => ({
  node_id: r.node_id,
  node_name: r.node_name,
  ifindex: r.ifindex,
  if_name: r.if_name,
  if_alias: r.if_alias,
  if_speed_bps: r.if_speed_bps === null ? null : Number(r.if_speed_bps),
  value: r.value,
});
