// The floor of bench/http-load.mjs: a bare node:http server with a pg pool (no framework, no authentication, no
// validation beyond the query string) that answers the bench's read routes with the service's own SQL (copied from the
// repositories: inventory NodeRepository.list, alerts HistoryRepository.page, polling MetricsRepository's interface-top
// walks) and the same JSON, bytes included (the bench compares them). Run as a child process:
//   REF_DATABASE_URL=postgres://… node bench/lib/http-reference.mjs   → prints "reference ready at http://127.0.0.1:<port>"
import { createServer } from "node:http";
import pg from "pg";

const pool = new pg.Pool({
  connectionString: process.env.REF_DATABASE_URL,
  max: Number(process.env.REF_POOL_MAX ?? 10),
  application_name: "nms-bench-reference",
});
const iso = (c) => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const NODE_COLUMNS = `n.id, n.name, host(n.address) AS address, n.node_kind, n.credential_id, n.group_id, n.parent_id, n.pool, n.effective_pool,
  n.profile_id, n.vendor, n.model, n.snmp_port, n.notes, n.tags, n.tags_excluded, n.effective_tags, n.profile_locked, n.sort_order,
  n.sys_object_id, n.sys_descr, n.sys_name, ${iso("n.created_at")} AS created_at, ${iso("n.updated_at")} AS updated_at`;
const NODES_SQL = `SELECT ${NODE_COLUMNS}, lower(n.name) AS name_key FROM inventory.node_rows n
  ORDER BY lower(n.name), n.id LIMIT $1`;
const HISTORY_SQL = `SELECT h.id, ${iso("h.recorded_at")} AS recorded_at, h.at_unix_ms::float8 AS at_unix_ms, h.check_id AS "check", h.direction,
  h.ifindex, h.if_name, h.metric, h.node_id AS node, h.observed_value, h.threshold_value, h.resolved, h.row_key AS "row", h.row_name,
  h.severity, h.state, h.subject_kind, h.subject_name, h.title, a.acked_by AS ack_by, ${iso("a.acked_at")} AS ack_at, a.note AS ack_note,
  h.cause_incident_key, h.cause_node_id,
  CASE WHEN h.cause_node_id IS NULL THEN NULL ELSE (SELECT cd.name FROM inventory.node_directory cd WHERE cd.id = h.cause_node_id) END AS cause_node_name
  FROM alerts.history h LEFT JOIN alerts.acks a ON a.incident_key = h.incident_key AND a.severity = h.severity
  ORDER BY h.recorded_at DESC, h.id DESC LIMIT $1`;
const VISIBLE = (alias) => `JOIN inventory.node_directory d ON d.id = ${alias}.node_id`;
// interface-top latest, throughput (if_in_bps + if_out_bps), scope All: the repository's walk down latest_pairs' rank.
const LATEST_SQL = `WITH c AS (
    SELECT p.node_id, p.ifindex, p.rank FROM polling.latest_pairs p WHERE p.pair = $3 ORDER BY p.rank DESC LIMIT $2),
  val AS (
    SELECT c.node_id, c.ifindex, x.value, x.latest_if_name FROM c CROSS JOIN LATERAL (
      SELECT sum(l.value) AS value, max(l.if_name) AS latest_if_name FROM polling.latest l
       WHERE l.node_id = c.node_id AND l.metric = ANY ($4::text[]) AND l.ifindex = c.ifindex AND l.row_key = -1
         AND l.at >= now() - make_interval(secs => 3600) HAVING count(*) > 0) x),
  top AS (
    SELECT val.node_id, d.name AS node_name, val.ifindex, coalesce(i.if_name, val.latest_if_name) AS if_name, i.if_alias, i.if_speed_bps, val.value
      FROM val ${VISIBLE("val")} LEFT JOIN polling.interfaces i ON i.node_id = val.node_id AND i.ifindex = val.ifindex
     ORDER BY val.value DESC, d.name, val.node_id, val.ifindex LIMIT $1)
  SELECT top.*, b.bound, b.exhausted FROM (SELECT coalesce(min(rank), 0) AS bound, count(*) < $2 AS exhausted FROM c) b
  LEFT JOIN top ON true ORDER BY top.value DESC, top.node_name, top.node_id, top.ifindex`;
// interface-top windowed, scope All: the repository's walk down the rollups' rank index.
const ROLLUP_SQL = `WITH c AS (
    SELECT r.node_id, r.ifindex, r.value FROM polling.interface_top_rollups r WHERE r.agg = $3 AND r.metric = $4 ORDER BY r.value DESC LIMIT $2),
  top AS (
    SELECT c.node_id, d.name AS node_name, c.ifindex, coalesce(i.if_name, ln.if_name) AS if_name, i.if_alias, i.if_speed_bps, c.value
      FROM c ${VISIBLE("c")}
      JOIN LATERAL (SELECT max(l.if_name) AS if_name FROM polling.latest l
                     WHERE l.node_id = c.node_id AND l.metric = ANY ($5::text[]) AND l.ifindex = c.ifindex AND l.row_key = -1
                       AND l.at >= now() - make_interval(secs => $6) HAVING count(*) > 0) ln ON true
      LEFT JOIN polling.interfaces i ON i.node_id = c.node_id AND i.ifindex = c.ifindex
     ORDER BY c.value DESC, d.name, c.node_id, c.ifindex LIMIT $1)
  SELECT top.*, b.bound, b.exhausted FROM (SELECT coalesce(min(value), 0) AS bound, count(*) < $2 AS exhausted FROM c) b
  LEFT JOIN top ON true ORDER BY top.value DESC, top.node_name, top.node_id, top.ifindex`;
const WINDOWS = { avg_15m: 900, max_15m: 900, avg_1h: 3600, max_1h: 3600 };

const depth = new Map();
/** The repository's walk: deeper until exact, starting where the last exact one stood (see MetricsRepository.walkUntilExact). */
async function walk(sql, limit, params, first = Math.max(256, limit * 8)) {
  const ranking = JSON.stringify([sql.length, params]);
  for (let k = Math.max(first, depth.get(ranking) ?? 0); ; k = k !== null && k < 16384 ? k * 4 : null) {
    const { rows } = await pool.query(sql, [limit, k, ...params]);
    const entries = rows
      .filter((r) => r.node_id !== null)
      .map((r) => ({
        node_id: r.node_id,
        node_name: r.node_name,
        ifindex: r.ifindex,
        if_name: r.if_name,
        if_alias: r.if_alias,
        if_speed_bps: r.if_speed_bps === null ? null : Number(r.if_speed_bps),
        value: r.value,
      }));
    const { bound, exhausted } = rows[0];
    if (k === null || exhausted || (entries.length === limit && entries[entries.length - 1].value > bound)) {
      if (k !== null) depth.set(ranking, k);
      return entries;
    }
  }
}

const cursor = (parts) => Buffer.from(JSON.stringify(parts), "utf8").toString("base64url");
const limitOf = (u, d, max) => Math.min(max, Math.max(1, Number(u.searchParams.get("limit") ?? d) || d));

async function answer(u) {
  switch (u.pathname) {
    case "/api/v1/nodes": {
      const limit = limitOf(u, 100, 1000);
      const { rows } = await pool.query(NODES_SQL, [limit + 1]);
      const kept = rows.slice(0, limit);
      const next = rows.length > limit ? cursor([kept[kept.length - 1].name_key, kept[kept.length - 1].id]) : null;
      return { body: kept.map(({ name_key: _k, ...r }) => r), next };
    }
    case "/api/v1/alerts/history": {
      const { rows } = await pool.query(HISTORY_SQL, [limitOf(u, 100, 1000)]);
      // The service's key order (its model's): acked before title, then the root cause this row was a symptom of.
      const body = rows.map(({ ack_by, ack_at, ack_note, title, cause_incident_key, cause_node_id, cause_node_name, ...r }) => ({
        ...r,
        acked: ack_by === null ? null : { by: ack_by, at: ack_at, note: ack_note },
        title,
        symptom_of:
          cause_incident_key === null || cause_node_id === null ? null : { incident_key: cause_incident_key, node: cause_node_id, node_name: cause_node_name },
      }));
      return { body, next: null };
    }
    case "/api/v1/metrics/interface-top": {
      if (u.searchParams.get("metric") !== "throughput") return null;
      const limit = Math.min(100, Math.max(1, Number(u.searchParams.get("limit") ?? 10) || 10));
      const agg = u.searchParams.get("agg") ?? "latest";
      const entries =
        agg === "latest"
          ? await walk(LATEST_SQL, limit, ["throughput", ["if_in_bps", "if_out_bps"]], Math.max(32, limit * 2))
          : WINDOWS[agg]
            ? await walk(ROLLUP_SQL, limit, [agg, "throughput", ["if_in_bps", "if_out_bps"], WINDOWS[agg]])
            : null;
      return entries && { body: { entries, partial: false }, next: null };
    }
    default:
      return null;
  }
}

const server = createServer((req, res) => {
  const u = new URL(req.url ?? "/", "http://x");
  answer(u).then(
    (a) => {
      if (!a) {
        res.writeHead(404, { "content-type": "application/json; charset=utf-8" }).end('{"error":{"code":"not_found","message":"No such route."}}');
        return;
      }
      const json = JSON.stringify(a.body);
      const headers = { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(json) };
      if (a.next) headers["x-next-cursor"] = a.next;
      res.writeHead(200, headers).end(json);
    },
    (err) => {
      console.error(err);
      res.writeHead(500).end();
    },
  );
});
server.keepAliveTimeout = 5000;
server.listen(0, "127.0.0.1", () => console.log(`reference ready at http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => server.close(() => void pool.end().then(() => process.exit(0))));
