// The data of bench/http-load.mjs, straight in PostgreSQL (shared with its reference server and by hand-run EXPLAINs).
import { seedInventory } from "./kernel.mjs";

/**
 * 10 site folders × 5 racks, `nodes` nodes; `ifs` interfaces per node with their latest in/out rates (polling.latest)
 * and one hour of per-minute samples for a quarter of them (polling.samples); `history` alert history rows over 30
 * days. Then ANALYZE.
 */
export async function seedHttpLoad(db, { nodes, history, ifs = 8, sites = 10, racks = 5 }) {
  await seedInventory(db, { sites, racks, nodes });
  // Latest in/out rates of `ifs` interfaces per node, as the pollers write them.
  await db.query(
    `INSERT INTO polling.latest (node_id, metric, ifindex, row_key, value, at, if_name)
     SELECT n.id, m, i, -1, (abs(hashtext(n.id::text || i || m)) % 1000000000)::float8, now(), 'Gi0/' || i
       FROM inventory.nodes n CROSS JOIN generate_series(1, ${ifs}) i CROSS JOIN unnest(ARRAY['if_in_bps', 'if_out_bps']) m`,
  );
  // One hour of per-minute samples for a quarter of the nodes (the windowed interface-top reads them).
  const now = Date.now();
  for (const day of new Set([now - 3_600_000, now].map((ms) => Math.floor(ms / 86_400_000) * 86_400_000))) {
    const name = `samples_${new Date(day).toISOString().slice(0, 10).replace(/-/g, "")}`;
    await db.query(
      `CREATE TABLE IF NOT EXISTS polling.${name} PARTITION OF polling.samples FOR VALUES FROM ('${new Date(day).toISOString()}') TO ('${new Date(day + 86_400_000).toISOString()}')`,
    );
  }
  await db.query(
    `INSERT INTO polling.samples (node_id, metric, ifindex, row_key, at, value)
     SELECT l.node_id, l.metric, l.ifindex, -1, now() - m * interval '1 minute', l.value * (0.5 + (m % 10) / 10.0)
       FROM polling.latest l CROSS JOIN generate_series(0, 59) m
      WHERE abs(hashtext(l.node_id::text)) % 4 = 0`,
  );
  await db.query(
    `INSERT INTO alerts.history (recorded_at, at_unix_ms, incident_key, check_id, direction, metric, node_id, observed_value, threshold_value,
                                 resolved, severity, state, subject_kind, title)
     SELECT to_timestamp(t / 1000.0), t, n.id || ':' || c, gen_random_uuid(), 'above', 'cpu_util', n.id, 95, 90, g % 2 = 1,
            CASE WHEN g % 10 < 3 THEN 'critical' ELSE 'warning' END,
            CASE WHEN g % 2 = 1 THEN 'ok' WHEN g % 10 < 3 THEN 'critical' ELSE 'warning' END, 'node', 'cpu_util above 90'
       FROM generate_series(1, ${history}) g
      CROSS JOIN LATERAL (SELECT $1::bigint - (${history} - g)::bigint * $2::bigint AS t, g % 37 AS c) x
       JOIN (SELECT row_number() OVER (ORDER BY id) - 1 AS i, id FROM inventory.nodes) n ON n.i = (g / 2) % ${nodes}`,
    [now, Math.floor((30 * 86_400_000) / history)],
  );
  await db.query("ANALYZE");
}
