/* global setImmediate */
// Alert evaluation across replicas (`npm run bench:alert-eval-replicas`; builds first).
//
// One embedded PostgreSQL; for 1, 2 and 3 replicas (a fresh database each) as many kernel processes (inventory +
// polling without its embedded poller + alerts, the partitioned engines of ADR 0017), NODES nodes and 6 global
// threshold rules. Each replica publishes polls on its own bus as the polling plugin does (one "polling.sample" event
// per node poll, 23 samples), for the nodes a balancer would send it (node i to replica i mod N), as fast as its engine
// takes them: the samples of nodes whose partition another replica holds go through the partition inbox. After
// SECS seconds the replicas stop publishing and the inbox is drained. Prints per replica count:
//   alert_eval_replicas_<N>_samples_per_sec   samples evaluated (every replica, owners only) per second of the run
//   alert_eval_replicas_<N>_forwarded_pct     share of the samples that went to another replica's partitions
//   alert_eval_replicas_<N>_drain_ms          from the end of publishing to an empty inbox
// The figures are the machine's, shared: the replicas, PostgreSQL and whatever else runs share its cores (printed).
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DIST = join(ROOT, "dist");
const NODES = Number(process.env.BENCH_NODES ?? 600);
const SECS = Number(process.env.BENCH_SECS ?? 10);
const COUNTS = (process.env.BENCH_REPLICAS ?? "1,2,3").split(",").map(Number);
const print = (key, value) => console.log(`${key}=${value}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const imp = (p) => import(pathToFileURL(join(DIST, p)).href);

if (!existsSync(join(DIST, "core/kernel/Kernel.js"))) {
  console.error(`dist/ is missing: run "npm run build" first (npm run bench:alert-eval-replicas does).`);
  process.exit(1);
}

if (process.argv.includes("--replica")) await replica();
else await parent();

// ---- the parent: the database, the replicas, the figures ----------------------------------------------------------

async function parent() {
  const { EmbeddedServer } = await imp("core/store/EmbeddedServer.js");
  const quiet = { debug() {}, info() {}, warn: (m) => process.stderr.write(`${m}\n`), error: (m) => process.stderr.write(`${m}\n`) };
  quiet.child = () => quiet;
  const dataDir = mkdtempSync(join(tmpdir(), "nms-bench-replicas-"));
  const server = new EmbeddedServer(dataDir, quiet);
  const children = new Set();
  const cleanup = async () => {
    for (const c of children) c.kill("SIGKILL");
    await server.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));
  print("alert_eval_replicas_machine", `${cpus().length}cpu,load=${loadavg()[0].toFixed(2)},node=${process.version},nodes=${NODES},secs=${SECS}`);
  try {
    const { url } = await server.start();
    for (const n of COUNTS) await runWith(n, url, children);
  } finally {
    await cleanup();
  }
}

async function runWith(n, adminUrl, children) {
  const dbName = `bench_replicas_${n}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = adminUrl.replace(/\/postgres$/, `/${dbName}`);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const token = randomBytes(24).toString("hex");
  const replicas = [];
  for (let i = 0; i < n; i++) {
    const child = fork(fileURLToPath(import.meta.url), ["--replica"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    children.add(child);
    const r = { child, index: i, pending: new Map(), seq: 0 };
    child.on("message", (m) => {
      r.pending.get(m.seq)?.(m);
      r.pending.delete(m.seq);
    });
    r.ask = (cmd, args = {}) =>
      new Promise((resolve) => {
        const seq = ++r.seq;
        r.pending.set(seq, resolve);
        child.send({ seq, cmd, ...args });
      });
    replicas.push(r);
    const ready = await r.ask("start", { url, token, index: i, of: n });
    if (ready.error) throw new Error(`replica ${i}: ${ready.error}`);
    if (i === 0) await r.ask("seed", { nodes: NODES });
  }
  // Every partition held, each replica its share.
  const share = Math.ceil(32 / n);
  for (const deadline = Date.now() + 30000; ;) {
    const { rows } = await db.query(
      `SELECT pid, count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted
          AND classid = (hashtext('nms.partitions')::bigint & 4294967295)::oid AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        GROUP BY pid`,
    );
    if (rows.length === n && rows.every((r) => r.n <= share) && rows.reduce((s, r) => s + r.n, 0) === 32) break;
    if (Date.now() > deadline) throw new Error(`partitions not balanced among ${n} replicas: ${JSON.stringify(rows)}`);
    await sleep(200);
  }
  await Promise.all(replicas.map((r) => r.ask("warm")));
  await drain(db);
  const before = await steady(replicas);
  const t0 = performance.now();
  const sent = await Promise.all(replicas.map((r) => r.ask("run", { secs: SECS })));
  const published = performance.now();
  await drain(db);
  const drained = performance.now();
  const after = await steady(replicas);
  // steady() waits 200 ms past the last evaluation: not part of the run.
  const done = performance.now() - 200;
  const evaluated = after.reduce((s, a, i) => s + a.evaluated - before[i].evaluated, 0);
  const forwarded = sent.reduce((s, x) => s + x.forwarded, 0);
  const total = sent.reduce((s, x) => s + x.samples, 0);
  print(`alert_eval_replicas_${n}_samples_per_sec`, Math.round(evaluated / ((done - t0) / 1000)));
  print(`alert_eval_replicas_${n}_samples_published`, total);
  print(`alert_eval_replicas_${n}_samples_evaluated`, evaluated);
  print(`alert_eval_replicas_${n}_forwarded_pct`, total ? ((100 * forwarded) / total).toFixed(1) : "0");
  print(`alert_eval_replicas_${n}_drain_ms`, Math.round(drained - published));
  print(`alert_eval_replicas_${n}_load`, loadavg()[0].toFixed(2));
  await Promise.all(replicas.map((r) => r.ask("stop")));
  for (const r of replicas) children.delete(r.child);
  await db.end();
}

/** The engines' counts once they stop moving (the last forwarded batch read is judged). */
async function steady(replicas) {
  let last = await Promise.all(replicas.map((r) => r.ask("stats")));
  for (;;) {
    await sleep(200);
    const again = await Promise.all(replicas.map((r) => r.ask("stats")));
    if (again.every((s, i) => s.evaluated === last[i].evaluated)) return again;
    last = again;
  }
}

async function drain(db) {
  for (const deadline = Date.now() + 120000; Date.now() < deadline; await sleep(50)) {
    const { rows } = await db.query("SELECT count(*)::int AS n FROM core.partition_inbox");
    if (rows[0].n === 0) return;
  }
  throw new Error("the partition inbox did not drain within 120 s");
}

// ---- a replica: one kernel in this process --------------------------------------------------------------------------

async function replica() {
  const { startKernel } = await imp("core/kernel/Kernel.js");
  const { inventoryPlugin } = await imp("plugins/inventory/index.js");
  const { pollingPlugin } = await imp("plugins/polling/index.js");
  const { alertsPlugin } = await imp("plugins/alerts/index.js");
  const { AlertEngine } = await imp("plugins/alerts/services/AlertEngine.js");
  const { partitionOf } = await imp("core/store/Partitions.js");
  let kernel = null;
  let ctx = null;
  let engine = null;
  let me = { index: 0, of: 1 };
  let nodes = [];
  const reply = (m, body = {}) => process.send({ seq: m.seq, ...body });
  const poll = (node, at) => {
    const base = { node_id: node, at_unix_ms: at, pool: "default", poller_id: "bench", backfill: false };
    const s = [];
    for (let i = 1; i <= 8; i++) {
      s.push({ ...base, metric: "if_in_bps", value: 100e6 + i, ifindex: i, if_name: `Gi0/${i}`, row: null, row_name: null });
      s.push({ ...base, metric: "if_out_bps", value: 50e6 + i, ifindex: i, if_name: `Gi0/${i}`, row: null, row_name: null });
    }
    s.push({ ...base, metric: "cpu_load_pct", value: 10, ifindex: null, if_name: null, row: 768, row_name: "cpu0" });
    s.push({ ...base, metric: "cpu_load_pct", value: 12, ifindex: null, if_name: null, row: 769, row_name: "cpu1" });
    for (const [row, name] of [
      [1, "/"],
      [31, "/var"],
      [32, "/var/log"],
    ])
      s.push({ ...base, metric: "storage_used_pct", value: 40, ifindex: null, if_name: null, row, row_name: name });
    s.push({ ...base, metric: "rtt_ms", value: 5, ifindex: null, if_name: null, row: null, row_name: null });
    s.push({ ...base, metric: "sys_uptime_secs", value: 86400, ifindex: null, if_name: null, row: null, row_name: null });
    return s;
  };
  const mine = async () => {
    const { rows } = await ctx.store.query("SELECT id FROM inventory.nodes ORDER BY name");
    nodes = rows.map((r) => r.id).filter((_, i) => i % me.of === me.index);
  };
  // One round over this replica's nodes; each emit resolves once the engine judged (or sent on) the poll.
  let at = Date.now() - 3_600_000;
  const round = async () => {
    let i = 0;
    at += 1000;
    for (const n of nodes) {
      await ctx.bus.emit("polling.sample", { samples: poll(n, at) });
      if (++i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
  };
  process.on("message", async (m) => {
    try {
      if (m.cmd === "start") {
        me = { index: m.index, of: m.of };
        kernel = await startKernel({
          env: { NMS_BOOTSTRAP_TOKEN: m.token },
          overrides: {
            port: 0,
            host: "127.0.0.1",
            databaseUrl: m.url,
            dataDir: mkdtempSync(join(tmpdir(), "nms-bench-replica-")),
            mode: "full",
            builtinPlugins: false,
            logLevel: "error",
            // No replay: the bench's samples are published, not stored.
            pluginConfig: { polling: { embeddedPoller: false }, alerts: { replaySecs: 0 } },
          },
          plugins: [inventoryPlugin, pollingPlugin, alertsPlugin],
          print: () => undefined,
          logSink: () => undefined,
        });
        ctx = kernel.context("alerts");
        engine = ctx.get(AlertEngine);
        await engine.start();
        reply(m, { url: kernel.url });
      } else if (m.cmd === "seed") {
        const q = (sql, params) => ctx.store.query(sql, params);
        await q(
          `INSERT INTO inventory.nodes (name, address) SELECT 'node-' || lpad(g::text, 6, '0'), ('10.60.0.0'::inet + g) FROM generate_series(0, $1 - 1) g`,
          [m.nodes],
        );
        // Global rules straight into the table: the engine reads the same rows as the API writes.
        for (const [metric, direction, warning, critical] of [
          ["rtt_ms", "above", 100, 500],
          ["if_in_bps", "above", 800e6, 950e6],
          ["if_out_bps", "above", 800e6, 950e6],
          ["cpu_load_pct", "above", 80, 90],
          ["storage_used_pct", "above", 85, 95],
          ["sys_uptime_secs", "below", 600, 60],
        ])
          await q(`INSERT INTO alerts.thresholds (metric, scope_level, direction, warning, critical) VALUES ($1, 'global', $2, $3, $4)`, [
            metric,
            direction,
            warning,
            critical,
          ]);
        reply(m);
      } else if (m.cmd === "warm") {
        await mine();
        // The rules and every node's directory row cached, node states written.
        for (let r = 0; r < 2; r++) await round();
        reply(m);
      } else if (m.cmd === "stats") {
        reply(m, { evaluated: engine.stats().samples_evaluated });
      } else if (m.cmd === "run") {
        const end = performance.now() + m.secs * 1000;
        let samples = 0;
        const space = (k) => partitionOf(k.toLowerCase(), 32);
        const owned = new Set();
        while (performance.now() < end) {
          await round();
          samples += nodes.length * 23;
        }
        // What this replica sent away: its nodes whose partition it does not hold (read once, at the end).
        const { rows } = await ctx.store.query(
          `SELECT l.objid::int AS p FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted AND a.application_name LIKE $1
              AND l.classid = (hashtext('nms.partitions')::bigint & 4294967295)::oid`,
          [`% ${process.pid}`],
        );
        for (const r of rows) owned.add(r.p);
        const away = nodes.filter((n) => !owned.has(space(n))).length;
        const forwarded = nodes.length ? Math.round((samples * away) / nodes.length) : 0;
        reply(m, { samples, forwarded });
      } else if (m.cmd === "stop") {
        await kernel?.stop();
        reply(m);
        process.exit(0);
      }
    } catch (err) {
      reply(m, { error: err.stack ?? String(err) });
    }
  });
}
