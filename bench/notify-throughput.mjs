// Notification throughput benchmark (`npm run bench:notify-throughput`; needs `npm run build` first).
//
// Runs the kernel in-process (dist build, embedded PostgreSQL in a fresh data dir, plugins inventory + polling
// without its embedded poller + alerts + notifications), a webhook receiver on loopback in this process that
// answers 1 % of requests 500 and 1 % 429 (Retry-After: 1) at random, one webhook channel and one routing rule for
// every severity. Publishes TRANSITIONS `alerts.fired` events with distinct ids and incident keys on the alerts
// plugin's bus (as the alert engine does, EMIT_BATCH at a time), and waits until the queue holds nothing queued
// or sending. Notifications settings are the defaults (concurrency 8, pollMs 1000, maxAttempts 8, breaker after 5
// consecutive failures) except retryBaseMs, lowered from 2000 to 200 so that a 500's retry does not dominate the
// tail (a 429's retry still waits its Retry-After of 1 s).
// Prints:
//   notify_deliveries_per_sec   delivered rows / seconds from the first emit to the last delivery settled
//   notify_enqueue_per_sec      transitions / seconds the emits took (routing + one queue row each)
//   notify_lost                 transitions the receiver never answered with 2xx
//   notify_doubled              transitions the receiver answered with 2xx more than once
//   notify_retry_overhead       (requests received − deliveries) / deliveries
//   notify_failed / _expired    deliveries that ended failed or expired
//   notify_node_cpu_pct         CPU of this process (kernel and receiver) over the run, % of one core
//   notify_db_xacts_per_delivery PostgreSQL transactions (committed + rolled back) per delivered row over the run
// BENCH_CONCURRENCY=n sets notifications.concurrency (default 8), BENCH_TRANSITIONS=n the number of transitions.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DIST = join(ROOT, "dist");
const TRANSITIONS = Number(process.env.BENCH_TRANSITIONS ?? 5000);
const EMIT_BATCH = 50;
const RETRY_BASE_MS = 200;
const TIMEOUT_MS = 600000;
/** Deliveries one replica sends at once; unset = the plugin's default (8). */
const CONCURRENCY = process.env.BENCH_CONCURRENCY ? Number(process.env.BENCH_CONCURRENCY) : undefined;

const print = (key, value) => console.log(`${key}=${value}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[notify-throughput] ${name} at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s\n`);

if (!existsSync(join(DIST, "plugins/notifications/index.js"))) {
  console.error("dist/plugins/notifications is missing: run `npm run build` first (npm run bench:notify-throughput does).");
  process.exit(1);
}

const imp = (p) => import(pathToFileURL(join(DIST, p)).href);
const { startTestKernel } = await imp("core/testing/index.js");
const { inventoryPlugin } = await imp("plugins/inventory/index.js");
const { pollingPlugin } = await imp("plugins/polling/index.js");
const { alertsPlugin } = await imp("plugins/alerts/index.js");
const { notificationsPlugin } = await imp("plugins/notifications/index.js");

// ---- the webhook receiver: 1 % 500, 1 % 429 with Retry-After: 1, else 200; counts requests and 2xx per transition ----
const ok = new Map(); // transition id → 2xx answers
let requests = 0;
let answered500 = 0;
let answered429 = 0;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    requests++;
    let id = null;
    try {
      id = JSON.parse(Buffer.concat(chunks).toString("utf8")).id ?? null;
    } catch {
      // not ours
    }
    const r = Math.random();
    if (r < 0.01) {
      answered500++;
      res.statusCode = 500;
    } else if (r < 0.02) {
      answered429++;
      res.statusCode = 429;
      res.setHeader("retry-after", "1");
    } else {
      res.statusCode = 200;
      if (id) ok.set(id, (ok.get(id) ?? 0) + 1);
    }
    res.end();
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

let k = null;

print("notify_machine", `${cpus().length}cpu,load=${loadavg()[0].toFixed(2)},node=${process.version}`);
try {
  // nms-core/testing: a kernel in this process on an embedded PostgreSQL of its own (removed on stop), with the production
  // job settings rather than the test ones.
  k = await startTestKernel({
    builtinPlugins: false,
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: {
      logLevel: "error",
      jobs: { drainMs: 10000, processEvery: "5 seconds", lockLifetimeMs: 600000 },
      pluginConfig: { polling: { embeddedPoller: false }, notifications: { retryBaseMs: RETRY_BASE_MS, ...(CONCURRENCY ? { concurrency: CONCURRENCY } : {}) } },
    },
  });
  const kernel = k.kernel;
  phase("kernel ready");
  const api = async (method, path, body) => {
    const res = await k.request(method, path.replace(/^\/api\/v1/, ""), { body });
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  const channel = (await api("POST", "/api/v1/notification-channels", { name: "bench hook", kind: "webhook", config: { url: hookUrl } })).id;
  await api("POST", "/api/v1/routing-rules", { name: "everything", severity: null, channel_ids: [channel] });

  const nctx = kernel.context("notifications");
  const deliveries = nctx.store.table("deliveries");
  const counts = async () => {
    const { rows } = await nctx.store.query(`SELECT status, count(*)::int AS n FROM ${deliveries} WHERE test = false GROUP BY status`);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };

  const bus = kernel.context("alerts").bus;
  const transition = (i) => {
    const node = randomUUID();
    return {
      id: randomUUID(),
      incident_key: `node:${node}:bench:cpu_load_pct`,
      recorded_at: new Date().toISOString(),
      at_unix_ms: Date.now(),
      check: "bench",
      direction: "above",
      ifindex: null,
      if_name: null,
      metric: "cpu_load_pct",
      node,
      observed_value: 95 + (i % 5),
      threshold_value: 90,
      resolved: false,
      row: 768,
      row_name: "cpu0",
      severity: "critical",
      state: "critical",
      subject_kind: "node",
      subject_name: `bench-node-${i}`,
      title: `CPU load above 90% on bench-node-${i}`,
      folder_path: [],
    };
  };
  const xacts = async () =>
    (await nctx.store.query(`SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n;
  const ids = [];
  const xact0 = await xacts();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < TRANSITIONS; i += EMIT_BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(TRANSITIONS, i + EMIT_BATCH); j++) {
      const t = transition(j);
      ids.push(t.id);
      batch.push(bus.emit("alerts.fired", t));
    }
    await Promise.all(batch);
  }
  const enqueued = performance.now() - t0;
  phase(`${TRANSITIONS} transitions emitted`);

  let c = {};
  for (;;) {
    c = await counts();
    if (!c.queued && !c.sending) break;
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`not settled within ${TIMEOUT_MS / 1000} s: ${JSON.stringify(c)}`);
    await sleep(100);
  }
  const { rows: last } = await nctx.store.query(
    `SELECT (extract(epoch FROM max(finished_at) - min(created_at)) * 1000)::float8 AS span_ms FROM ${deliveries} WHERE test = false`,
  );
  const settled = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const xactN = (await xacts()) - xact0;
  phase("queue settled");
  await sleep(1000); // a request still on the wire after its row settled would show here

  const delivered = c.delivered ?? 0;
  let lost = 0;
  let doubled = 0;
  for (const id of ids) {
    const n = ok.get(id) ?? 0;
    if (n === 0) lost++;
    if (n > 1) doubled++;
  }
  const { rows: attemptRows } = await nctx.store.query(
    `SELECT count(*)::int AS n, max(attempt)::int AS max_attempt FROM ${nctx.store.table("delivery_attempts")}`,
  );
  print("notify_transitions", TRANSITIONS);
  print("notify_deliveries_per_sec", Math.round(delivered / (settled / 1000)));
  print("notify_enqueue_per_sec", Math.round(TRANSITIONS / (enqueued / 1000)));
  print("notify_settle_secs", (settled / 1000).toFixed(1));
  print("notify_db_span_secs", last[0]?.span_ms == null ? "n/a" : (last[0].span_ms / 1000).toFixed(1));
  print("notify_delivered", delivered);
  print("notify_failed", c.failed ?? 0);
  print("notify_expired", c.expired ?? 0);
  print("notify_lost", lost);
  print("notify_doubled", doubled);
  print("notify_requests", requests);
  print("notify_answered_500", answered500);
  print("notify_answered_429", answered429);
  print("notify_retry_overhead", delivered ? ((requests - delivered) / delivered).toFixed(4) : "n/a");
  print("notify_attempts_logged", attemptRows[0].n);
  print("notify_max_attempt", attemptRows[0].max_attempt);
  print("notify_retry_base_ms", RETRY_BASE_MS);
  print("notify_concurrency", CONCURRENCY ?? "default(8)");
  // CPU of this process (kernel + receiver; PostgreSQL runs in processes of its own) over the run, % of one core
  // statements run by the whole kernel (autocommit: one transaction each, status polls of this bench included) per delivery
  print("notify_db_xacts_per_delivery", delivered ? (xactN / delivered).toFixed(1) : "n/a");
  print("notify_node_cpu_pct", Math.round(((cpu.user + cpu.system) / 1000 / settled) * 100));
  print("notify_load_after", loadavg()[0].toFixed(2));
} finally {
  phase("stopping");
  await k?.stop();
  await new Promise((r) => receiver.close(() => r()));
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
