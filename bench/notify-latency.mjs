// Notification latency benchmark (`npm run bench:notify-latency`; needs `npm run build` first).
//
// Runs the kernel in-process (dist build, embedded PostgreSQL in a fresh data dir, plugins inventory + polling
// without its embedded poller + alerts + notifications, every setting at its default: alerts flushMs 200,
// notifications pollMs 1000, concurrency 8), a webhook receiver on loopback in this process, one webhook channel
// and one routing rule for every severity. Creates NODES nodes over the API and one global threshold
// (cpu_load_pct above, warning 80, critical 90), then TRIALS times publishes a sample on the bus exactly as the
// polling plugin does ("polling.sample"), alternately crossing the critical bound (99 %) and going back below
// the warning bound (10 %), on the nodes in turn, and measures the time from the emit to the receiver getting
// the POST (fire or resolve) for that node.
// Prints:
//   notify_latency_p50_ms / _p99_ms / _max_ms   sample published → webhook POST received
//   notify_latency_fire_p99_ms / _resolve_p99_ms the same split by event
//   notify_latency_engine_p50_ms / _p99_ms       of which sample → alerts.fired/resolved on the bus (the engine's flush window)
//   notify_latency_delivery_p50_ms / _p99_ms     of which alerts.fired/resolved → POST received (queue row, claim, render, send)
//   notify_latency_samples                       measurements taken
// BENCH_TRIALS=n sets the number of measurements (default 200), BENCH_FLUSH_MS=n the alert engine's flushMs (default 200).

import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DIST = join(ROOT, "dist");
const TRIALS = Number(process.env.BENCH_TRIALS ?? 200);
const NODES = 20;
const TIMEOUT_MS = 10000;
/** The alert engine's flush window; unset = its default (200 ms). */
const FLUSH_MS = process.env.BENCH_FLUSH_MS ? Number(process.env.BENCH_FLUSH_MS) : undefined;

const print = (key, value) => console.log(`${key}=${value}`);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[notify-latency] ${name} at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s\n`);

if (!existsSync(join(DIST, "plugins/notifications/index.js"))) {
  console.error("dist/plugins/notifications is missing: run `npm run build` first (npm run bench:notify-latency does).");
  process.exit(1);
}

const imp = (p) => import(pathToFileURL(join(DIST, p)).href);
const { startTestKernel } = await imp("core/testing/index.js");
const { inventoryPlugin } = await imp("plugins/inventory/index.js");
const { pollingPlugin } = await imp("plugins/polling/index.js");
const { alertsPlugin } = await imp("plugins/alerts/index.js");
const { notificationsPlugin } = await imp("plugins/notifications/index.js");

// ---- the webhook receiver: resolves the waiter of `${node}:${event}` when its POST arrives ----
const waiters = new Map();
let posts = 0;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const at = performance.now();
    posts++;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      waiters.get(`${body.node}:${body.event}`)?.(at);
    } catch {
      // not ours
    }
    res.statusCode = 200;
    res.end();
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

let k = null;

print("notify_latency_machine", `${cpus().length}cpu,load=${loadavg()[0].toFixed(2)},node=${process.version}`);
try {
  // nms-core/testing: a kernel in this process on an embedded PostgreSQL of its own (removed on stop), with the production
  // job settings rather than the test ones.
  k = await startTestKernel({
    builtinPlugins: false,
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin],
    overrides: {
      logLevel: "error",
      jobs: { drainMs: 10000, processEvery: "5 seconds", lockLifetimeMs: 600000 },
      pluginConfig: { polling: { embeddedPoller: false }, ...(FLUSH_MS ? { alerts: { flushMs: FLUSH_MS } } : {}) },
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
  const nodes = [];
  for (let i = 0; i < NODES; i++) nodes.push((await api("POST", "/api/v1/nodes", { name: `bench-node-${i}`, address: `10.61.0.${i + 1}` })).id);
  await api("POST", "/api/v1/thresholds", { metric: "cpu_load_pct", scope_level: "global", direction: "above", warning: 80, critical: 90 });

  const bus = kernel.context("polling").bus;
  // when the transition reached the bus, per `${node}:${event}` (the split between engine and delivery)
  const onBus = new Map();
  const alertsBus = kernel.context("alerts").bus;
  alertsBus.on("alerts.fired", (t) => void onBus.set(`${t.node}:fire`, performance.now()));
  alertsBus.on("alerts.resolved", (t) => void onBus.set(`${t.node}:resolve`, performance.now()));
  const emit = (node, value) =>
    bus.emit("polling.sample", {
      samples: [
        {
          node_id: node,
          metric: "cpu_load_pct",
          value,
          at_unix_ms: Date.now(),
          ifindex: null,
          if_name: null,
          row: 768,
          row_name: "cpu0",
          pool: "default",
          poller_id: "bench",
          backfill: false,
        },
      ],
    });
  let engineMs = [];
  let deliveryMs = [];
  const trial = async (node, event, value) => {
    const key = `${node}:${event}`;
    let timer;
    const got = new Promise((resolve, reject) => {
      waiters.set(key, resolve);
      timer = setTimeout(() => reject(new Error(`no ${event} POST for ${node} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    });
    const start = performance.now();
    await emit(node, value);
    const at = await got;
    clearTimeout(timer);
    waiters.delete(key);
    const transitioned = onBus.get(key);
    onBus.delete(key);
    if (transitioned !== undefined) {
      engineMs.push(transitioned - start);
      deliveryMs.push(at - transitioned);
    }
    return at - start;
  };

  // warm-up: every node fires and clears once (directory rows cached, delivery path compiled), not measured
  for (const n of nodes) {
    await trial(n, "fire", 99);
    await trial(n, "resolve", 10);
  }
  phase("warm-up done");
  engineMs = [];
  deliveryMs = [];

  const fire = [];
  const resolve = [];
  for (let i = 0; i < TRIALS; i++) {
    const node = nodes[Math.floor(i / 2) % nodes.length];
    if (i % 2 === 0) fire.push(await trial(node, "fire", 99));
    else resolve.push(await trial(node, "resolve", 10));
    await sleep(Math.random() * 50);
  }
  phase("trials done");
  const all = [...fire, ...resolve];
  print("notify_latency_p50_ms", pct(all, 50).toFixed(1));
  print("notify_latency_p99_ms", pct(all, 99).toFixed(1));
  print("notify_latency_max_ms", Math.max(...all).toFixed(1));
  print("notify_latency_fire_p50_ms", pct(fire, 50).toFixed(1));
  print("notify_latency_fire_p99_ms", pct(fire, 99).toFixed(1));
  print("notify_latency_resolve_p50_ms", pct(resolve, 50).toFixed(1));
  print("notify_latency_resolve_p99_ms", pct(resolve, 99).toFixed(1));
  print("notify_latency_engine_p50_ms", pct(engineMs, 50).toFixed(1));
  print("notify_latency_engine_p99_ms", pct(engineMs, 99).toFixed(1));
  print("notify_latency_delivery_p50_ms", pct(deliveryMs, 50).toFixed(1));
  print("notify_latency_delivery_p99_ms", pct(deliveryMs, 99).toFixed(1));
  print("notify_latency_samples", all.length);
  print("notify_latency_posts", posts);
  print("notify_latency_flush_ms", FLUSH_MS ?? "default(200)");
  print("notify_latency_load_after", loadavg()[0].toFixed(2));
} finally {
  phase("stopping");
  await k?.stop();
  await new Promise((r) => receiver.close(() => r()));
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
