// Bulk-write benchmark of the store: the events table written the way EventRepository.insert does (one INSERT … SELECT
// FROM ROWS FROM (unnest(…)) per batch, the columns as array literals) against COPY through core's copy writer
// (`npm run bench:store-copy`; needs `npm run build` first).
//
// The store: an embedded PostgreSQL (the kernel's own, a fresh data directory; DATABASE_URL to use another server, then
// the server CPU is not measured) with a table of the events table's shape and indexes (plugins/events/migrations:
// 0001_init.sql after 0002_drop_events_page.sql: primary key (received_at, id), the partial node index, the GIN index on
// folder_path), one daily partition, autovacuum off on it so that no vacuum lands in a measurement.
// The rows: BENCH_ROWS (default 200000) syslog-like events (500 hosts, 80 % attributed to a node with two folders,
// RFC 5424 messages of ~120 characters and their ~200-character raw lines, one in ten with structured data as jsonb,
// a few with tabs and backslashes), written in batches of BENCH_BATCH (1000), one transaction per batch.
// The ways, each on the emptied table after a CHECKPOINT, repeated BENCH_REPEATS times (default 3) in turn:
//   unnest:           the SQL of EventRepository.insert (copied here, as it was when COPY came);
//   copy:             copyWithDeadLetters (SAVEPOINT, one COPY, RELEASE per batch: what the pipeline will run);
//   copy_nosavepoint: copyRows (the COPY alone), to show what the savepoint costs.
// Figures (medians over the repetitions): rows/s; PostgreSQL CPU per row in µs (user + system of every postgres process
// of the embedded server, from /proc, over the run: backends, WAL writer, checkpointer…); this process's CPU per row
// in µs (building the batch text and the driver). A checksum of the table after each run shows all ways store the same.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, load, print, ROOT } from "./lib/kernel.mjs";
import { descendantsCpuSecs, machine, median } from "./lib/events-peers.mjs";

const { copyRows, copyWithDeadLetters } = await import(join(ROOT, "dist/core/store/copyWriter.js"));
const { plainArrayLiteral, textArrayLiteral } = await import(join(ROOT, "dist/core/store/arrayLiteral.js"));

const ROWS = Number(process.env.BENCH_ROWS ?? 200000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const DAY_MS = 86_400_000;
const BASE_MS = Math.floor(Date.UTC(2026, 2, 31) / DAY_MS) * DAY_MS + 3_600_000;

// ---- rows ----------------------------------------------------------------------------------------------------------

function rng(seed) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296;
}

function makeRows(n) {
  const r = rng(514);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const folders = Array.from({ length: 40 }, () => randomUUID());
  const hosts = Array.from({ length: 500 }, (_, i) => ({
    name: `rtr-${String(i).padStart(3, "0")}.site${i % 20}.example.net`,
    ip: `10.${(i >> 8) & 255}.${i & 255}.1`,
    node: i % 5 === 4 ? null : randomUUID(),
    path: [folders[i % 8], folders[8 + (i % 32)]],
  }));
  const apps = ["sshd", "kernel", "bgpd", "ospfd", "snmpd", "cron", "ntpd", "lldpd", "sudo", "dhcpd"];
  const texts = [
    (h, k) => `Accepted publickey for admin from 192.0.2.${k % 250} port ${40000 + (k % 20000)} ssh2: ED25519 SHA256:${k.toString(36)}`,
    (h, k) => `%LINK-3-UPDOWN: Interface GigabitEthernet0/${k % 48}, changed state to ${k % 2 ? "up" : "down"}`,
    (h, k) => `BGP neighbor 198.51.100.${k % 250} (AS 645${k % 100}) Down: Hold timer expired, last error 4/0 after ${k % 900} s`,
    (h, k) => `Failed password for invalid user test${k % 100} from 203.0.113.${k % 250} port ${k % 65535} ssh2`,
    (h, k) => `CPU utilization for five seconds: ${k % 100}%/${k % 7}%; one minute: ${k % 60}%; five minutes: ${k % 50}%`,
    (h, k) => `path C:\\config\\startup-${k % 10}.cfg\tcopied to flash: (tab and backslashes kept)`,
  ];
  const rows = new Array(n);
  for (let i = 0; i < n; i++) {
    const h = pick(hosts);
    const app = pick(apps);
    const severity = Math.floor(r() * 8);
    const facility = Math.floor(r() * 24);
    const message = pick(texts)(h, i);
    const ms = BASE_MS + Math.floor(i / 20); // 20 000 events a second: many share their millisecond
    const sd = i % 10 === 0;
    const matched = i % 25 === 0;
    rows[i] = {
      id: randomUUID(),
      received_at_ms: ms,
      kind: "syslog",
      transport: "udp",
      listener: "udp",
      source_ip: h.ip,
      source_id: "5e7a0c1d-2b3f-4a6e-9c8d-000000000514",
      node_id: h.node,
      folder_path: h.node ? h.path : [],
      severity,
      facility,
      host: h.name,
      app,
      msgid: i % 3 === 0 ? `ID${i % 100}` : null,
      message,
      trap_oid: null,
      data: sd ? { "exampleSDID@32473": { iut: String(i % 9), eventSource: "Application", eventID: String(1000 + (i % 50)) } } : null,
      raw: `<${facility * 8 + severity}>1 ${new Date(ms).toISOString()} ${h.name} ${app} ${1000 + (i % 30000)} ${i % 3 === 0 ? `ID${i % 100}` : "-"} - ${message}`,
      malformed: false,
      action: matched ? "alert_raised" : "unmatched",
      rule_id: matched ? "0b4c1d8e-7f60-4a3b-9c2d-1e2f3a4b5c6d" : null,
    };
  }
  return rows;
}

// ---- the table -----------------------------------------------------------------------------------------------------

const TABLE = `"events"."events"`;

async function createTable(db) {
  await db.query(`
    CREATE SCHEMA events;
    CREATE TABLE events.events (
      id uuid NOT NULL,
      received_at timestamptz NOT NULL,
      kind text NOT NULL,
      transport text NOT NULL,
      listener text NOT NULL,
      source_ip inet,
      source_id uuid,
      node_id uuid,
      folder_path uuid[] NOT NULL DEFAULT '{}',
      severity smallint,
      facility smallint,
      host text,
      app text,
      msgid text,
      message text NOT NULL,
      trap_oid text,
      data jsonb,
      raw text,
      malformed boolean NOT NULL DEFAULT false,
      action text NOT NULL,
      rule_id uuid,
      PRIMARY KEY (received_at, id)
    ) PARTITION BY RANGE (received_at);
    CREATE INDEX events_node ON events.events (node_id, received_at DESC) WHERE node_id IS NOT NULL;
    CREATE INDEX events_folders ON events.events USING gin (folder_path);
    CREATE TABLE events.events_p PARTITION OF events.events
      FOR VALUES FROM ('${new Date(BASE_MS - 3_600_000).toISOString()}') TO ('${new Date(BASE_MS - 3_600_000 + DAY_MS).toISOString()}')
      WITH (autovacuum_enabled = false);
  `);
}

// ---- the ways ------------------------------------------------------------------------------------------------------

/** EventRepository.insert as it was (plugins/events/repositories/EventRepository.ts before COPY). */
async function insertUnnest(db, rows) {
  const text = (get) => textArrayLiteral(rows, get);
  const plain = (get) => plainArrayLiteral(rows, get);
  await db.query(
    `INSERT INTO ${TABLE} (id, received_at, kind, transport, listener, source_ip, source_id, node_id, folder_path, severity, facility, host, app, msgid,
            message, trap_oid, data, raw, malformed, action, rule_id)
     SELECT u.id, timestamptz 'epoch' + u.ms * interval '1 millisecond', u.kind, u.transport, u.listener, u.source_ip::inet, u.source_id, u.node_id,
            u.folder_path::uuid[], u.severity, u.facility, u.host, u.app, u.msgid, u.message, u.trap_oid, nullif(u.data::jsonb, 'null'), u.raw, u.malformed, u.action, u.rule_id
       FROM ROWS FROM (unnest($1::uuid[]), unnest($2::float8[]), unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), unnest($6::text[]),
                       unnest($7::uuid[]), unnest($8::uuid[]), unnest($9::text[]), unnest($10::int2[]), unnest($11::int2[]), unnest($12::text[]),
                       unnest($13::text[]), unnest($14::text[]), unnest($15::text[]), unnest($16::text[]), json_array_elements($17::json),
                       unnest($18::text[]), unnest($19::bool[]), unnest($20::text[]), unnest($21::uuid[]))
         AS u(id, ms, kind, transport, listener, source_ip, source_id, node_id, folder_path, severity, facility, host, app, msgid, message, trap_oid,
              data, raw, malformed, action, rule_id)`,
    [
      text((r) => r.id),
      plain((r) => r.received_at_ms),
      text((r) => r.kind),
      text((r) => r.transport),
      text((r) => r.listener),
      text((r) => r.source_ip),
      text((r) => r.source_id),
      text((r) => r.node_id),
      text((r) => `{${r.folder_path.join(",")}}`),
      plain((r) => r.severity),
      plain((r) => r.facility),
      text((r) => r.host),
      text((r) => r.app),
      text((r) => r.msgid),
      text((r) => r.message),
      text((r) => r.trap_oid),
      JSON.stringify(rows.map((r) => r.data)),
      text((r) => r.raw),
      plain((r) => r.malformed),
      text((r) => r.action),
      text((r) => r.rule_id),
    ],
  );
}

/** The events columns for the copy writer. */
const COLUMNS = [
  { name: "id", type: "uuid", get: (r) => r.id },
  { name: "received_at", type: "timestamptz_ms", get: (r) => r.received_at_ms },
  { name: "kind", type: "text", get: (r) => r.kind },
  { name: "transport", type: "text", get: (r) => r.transport },
  { name: "listener", type: "text", get: (r) => r.listener },
  { name: "source_ip", type: "inet", get: (r) => r.source_ip },
  { name: "source_id", type: "uuid", get: (r) => r.source_id },
  { name: "node_id", type: "uuid", get: (r) => r.node_id },
  { name: "folder_path", type: "uuid[]", get: (r) => r.folder_path },
  { name: "severity", type: "int", get: (r) => r.severity },
  { name: "facility", type: "int", get: (r) => r.facility },
  { name: "host", type: "text", get: (r) => r.host },
  { name: "app", type: "text", get: (r) => r.app },
  { name: "msgid", type: "text", get: (r) => r.msgid },
  { name: "message", type: "text", get: (r) => r.message },
  { name: "trap_oid", type: "text", get: (r) => r.trap_oid },
  { name: "data", type: "jsonb", get: (r) => r.data },
  { name: "raw", type: "text", get: (r) => r.raw },
  { name: "malformed", type: "bool", get: (r) => r.malformed },
  { name: "action", type: "text", get: (r) => r.action },
  { name: "rule_id", type: "uuid", get: (r) => r.rule_id },
];
const SPEC = { table: TABLE, columns: COLUMNS, target: "events.events" };

const WAYS = {
  unnest: (client, batch) => insertUnnest(client, batch),
  copy: async (client, batch) => {
    const { stored, deadLettered } = await copyWithDeadLetters(client, SPEC, batch);
    if (stored !== batch.length || deadLettered) throw new Error(`copy stored ${stored} of ${batch.length}, ${deadLettered} dead letters`);
  },
  copy_nosavepoint: (client, batch) => copyRows(client, TABLE, COLUMNS, batch),
};

// ---- the run -------------------------------------------------------------------------------------------------------

const store = benchStore("store-copy");
try {
  const url = await store.database();
  const measurePg = !process.env.DATABASE_URL;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  await createTable(pool);
  process.stderr.write(`[store-copy] ${machine()}: building ${ROWS} rows\n`);
  const rows = makeRows(ROWS);
  const batches = [];
  for (let i = 0; i < rows.length; i += BATCH) batches.push(rows.slice(i, i + BATCH));
  const results = Object.fromEntries(Object.keys(WAYS).map((w) => [w, []]));
  const checksums = new Set();

  // One warm-up batch per way (JIT, plan cache, connection), not measured.
  for (const way of Object.values(WAYS)) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await way(client, batches[0]);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
  }

  for (let rep = 0; rep < REPEATS; rep++) {
    for (const [name, way] of Object.entries(WAYS)) {
      await pool.query(`TRUNCATE ${TABLE}`);
      await pool.query("CHECKPOINT");
      const client = await pool.connect();
      const loadBefore = load();
      const pg0 = measurePg ? descendantsCpuSecs("postgres") : 0;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      try {
        for (const batch of batches) {
          await client.query("BEGIN");
          await way(client, batch);
          await client.query("COMMIT");
        }
      } finally {
        client.release();
      }
      const secs = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const pgSecs = measurePg ? descendantsCpuSecs("postgres") - pg0 : NaN;
      const { rows: check } = await pool.query(`SELECT count(*)::int AS n, sum(hashtext(e::text)::bigint)::text AS sum FROM ${TABLE} e`);
      if (check[0].n !== ROWS) throw new Error(`${name}: ${check[0].n} rows stored, not ${ROWS}`);
      checksums.add(check[0].sum);
      const r = { rate: ROWS / secs, pgUs: (pgSecs * 1e6) / ROWS, nodeUs: (cpu.user + cpu.system) / ROWS };
      results[name].push(r);
      process.stderr.write(
        `[store-copy] rep ${rep + 1} ${name}: ${Math.round(r.rate)} rows/s, pg ${r.pgUs.toFixed(1)} µs/row, node ${r.nodeUs.toFixed(1)} µs/row, ` +
          `${secs.toFixed(1)} s, load ${loadBefore} → ${load()}\n`,
      );
    }
  }
  await pool.end();

  console.log(`# ${machine()} rows=${ROWS} batch=${BATCH} repeats=${REPEATS} same_content=${checksums.size === 1}`);
  const prefix = { unnest: "store_insert_unnest", copy: "store_copy", copy_nosavepoint: "store_copy_nosavepoint" };
  for (const [name, rs] of Object.entries(results)) {
    print(`${prefix[name]}_rows_per_sec`, Math.round(median(rs.map((r) => r.rate))));
    print(`${prefix[name]}_pg_us_per_row`, median(rs.map((r) => r.pgUs)).toFixed(2));
    print(`${prefix[name]}_node_us_per_row`, median(rs.map((r) => r.nodeUs)).toFixed(2));
  }
  if (checksums.size !== 1) throw new Error("the ways stored different content");
} finally {
  await store.cleanup();
}
