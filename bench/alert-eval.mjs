/* global fetch, setImmediate */
// Alert-engine benchmark (`npm run bench:alert-eval`; needs `npm run build` first).
//
// Runs the kernel in-process (dist build, embedded PostgreSQL in a fresh data dir, plugins inventory +
// polling without its embedded poller + alerts, a free loopback port), once per flush window (the
// default 200 ms and 20 ms), each in a child process of its own (one Ts.ED container per process).
// Each run files NODES nodes under 10 sites × 5 floors with 20 profiles, creates ~690 threshold rules
// through the API (global, profile, folder with and without row_match, node, interface), starts the
// engine and publishes samples on the bus exactly as the polling plugin does ("polling.sample", one
// event per node poll: 8 ports × in/out bps, 2 CPU rows, 3 storage rows, rtt, uptime = 23 samples).
// Prints, per flush window:
//   alert_eval_samples_per_sec            evaluated samples per second, all normal (no transition)
//   alert_eval_samples_per_sec_churn      the same with 1 % of nodes crossing a bound each round (fires and clears written)
//   alert_eval_fire_ms_p50 / _p99         sample crossing a bound → alerts.fired, engine otherwise idle (200 trials)
//   alert_eval_fire_load_ms_p50 / _p99    the same while polls of every node keep arriving (~20 % of the measured rate)
// and the shape of the run (nodes, rules, series).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DIST = join(ROOT, "dist");
const NODES = Number(process.env.BENCH_NODES ?? 2000);
const ROUNDS = 5;
const TRIALS = 200;
const FLUSH_WINDOWS = [200, 20];

const print = (key, value) => console.log(`${key}=${value}`);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const yieldLoop = () => new Promise((r) => setImmediate(r));

if (!existsSync(join(DIST, "core/kernel/Kernel.js"))) {
  console.error(`dist/ is missing: run "npm run build" first (npm run bench:alert-eval does).`);
  process.exit(1);
}

const childArg = process.argv.find((a) => a.startsWith("--flush-ms="));
if (!childArg) {
  // Parent: one child per flush window.
  print("alert_eval_machine", `${cpus().length}cpu,load=${loadavg()[0].toFixed(2)},node=${process.version}`);
  for (const flushMs of FLUSH_WINDOWS) {
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), `--flush-ms=${flushMs}`], { stdio: ["ignore", "inherit", "inherit"] });
      child.once("exit", (c) => resolve(c));
    });
    if (code !== 0) process.exit(code ?? 1);
  }
  process.exit(0);
}

const flushMs = Number(childArg.split("=")[1]);
const tag = flushMs === 200 ? "" : `_flush${flushMs}`;
const out = (key, value) => print(`alert_eval${tag}_${key}`, value);
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[flush ${flushMs} ms] ${name} at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s\n`);

const imp = (p) => import(pathToFileURL(join(DIST, p)).href);
const { startKernel } = await imp("core/kernel/Kernel.js");
const { inventoryPlugin } = await imp("plugins/inventory/index.js");
const { pollingPlugin } = await imp("plugins/polling/index.js");
const { alertsPlugin } = await imp("plugins/alerts/index.js");
const { AlertEngine } = await imp("plugins/alerts/services/AlertEngine.js");
const { injector } = await import("@tsed/di");

const token = randomBytes(24).toString("hex");
const dataDir = mkdtempSync(join(tmpdir(), "nms-bench-alerts-"));
let kernel = null;
process.on("SIGINT", () => {
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(130);
});

try {
  kernel = await startKernel({
    env: { NMS_BOOTSTRAP_TOKEN: token },
    overrides: {
      port: 0,
      host: "127.0.0.1",
      dataDir,
      databaseUrl: null,
      mode: "full",
      builtinPlugins: false,
      logLevel: "error",
      pluginConfig: { polling: { embeddedPoller: false }, alerts: { flushMs } },
    },
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin],
    print: () => undefined,
    logSink: () => undefined,
  });
  phase("kernel ready");
  const ctx = kernel.context("alerts");
  const q = (sql, params) => ctx.store.query(sql, params);
  const api = async (method, path, body) => {
    const res = await fetch(`${kernel.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };

  // ---- inventory: 10 sites × 5 floors, 20 profiles, NODES nodes ----
  const sites = (await q(`INSERT INTO inventory.node_groups (name) SELECT 'site-' || g FROM generate_series(1, 10) g RETURNING id`)).rows.map((r) => r.id);
  const floors = (
    await q(`INSERT INTO inventory.node_groups (name, parent_id) SELECT 'floor-' || g, ($1::uuid[])[1 + g % 10] FROM generate_series(0, 49) g RETURNING id`, [
      sites,
    ])
  ).rows.map((r) => r.id);
  const profiles = (await q(`INSERT INTO inventory.profiles (name) SELECT 'profile-' || g FROM generate_series(1, 20) g RETURNING id`)).rows.map((r) => r.id);
  const nodes = (
    await q(
      `INSERT INTO inventory.nodes (name, address, group_id, profile_id)
       SELECT 'node-' || g, ('10.60.0.0'::inet + g), ($1::uuid[])[1 + g % 50], ($2::uuid[])[1 + g % 20] FROM generate_series(0, $3 - 1) g RETURNING id`,
      [floors, profiles, NODES],
    )
  ).rows.map((r) => r.id);

  // ---- rules through the API ----
  const rules = [];
  const rule = async (body) => rules.push((await api("POST", "/api/v1/thresholds", { direction: "above", ...body })).id);
  const rttRule = (await api("POST", "/api/v1/thresholds", { metric: "rtt_ms", scope_level: "global", direction: "above", warning: 100, critical: 500 })).id;
  rules.push(rttRule);
  await rule({ metric: "if_in_bps", scope_level: "global", warning: 800e6, critical: 950e6 });
  await rule({ metric: "if_out_bps", scope_level: "global", warning: 800e6, critical: 950e6 });
  await rule({ metric: "cpu_load_pct", scope_level: "global", warning: 80, critical: 90 });
  await rule({ metric: "storage_used_pct", scope_level: "global", warning: 85, critical: 95 });
  await rule({ metric: "sys_uptime_secs", scope_level: "global", direction: "below", warning: 600, critical: 60 });
  for (const f of floors) await rule({ metric: "cpu_load_pct", scope_level: "folder", scope_ids: [f], warning: 70, critical: 85 });
  for (const f of floors.slice(0, 10)) await rule({ metric: "storage_used_pct", scope_level: "folder", scope_ids: [f], warning: 90, row_match: "/var*" });
  for (const p of profiles) await rule({ metric: "if_in_bps", scope_level: "profile", scope_ids: [p], warning: 500e6 });
  for (const n of nodes.slice(0, 300)) await rule({ metric: "cpu_load_pct", scope_level: "node", scope_ids: [n], warning: 60, critical: 95 });
  for (const n of nodes.slice(300, 600)) await rule({ metric: "if_in_bps", scope_level: "interface", scope_ids: [`${n}:1`], warning: 900e6 });

  phase("rules created");
  await ctx.get(AlertEngine).start();
  const engine = injector().get(AlertEngine);

  // ---- samples ----
  const poll = (node, at, cpu = 10, rtt = 5) => {
    const s = [];
    const base = { node_id: node, at_unix_ms: at, pool: "default", poller_id: "bench", backfill: false };
    for (let i = 1; i <= 8; i++) {
      s.push({ ...base, metric: "if_in_bps", value: 100e6 + i, ifindex: i, if_name: `Gi0/${i}`, row: null, row_name: null });
      s.push({ ...base, metric: "if_out_bps", value: 50e6 + i, ifindex: i, if_name: `Gi0/${i}`, row: null, row_name: null });
    }
    s.push({ ...base, metric: "cpu_load_pct", value: cpu, ifindex: null, if_name: null, row: 768, row_name: "cpu0" });
    s.push({ ...base, metric: "cpu_load_pct", value: 12, ifindex: null, if_name: null, row: 769, row_name: "cpu1" });
    for (const [row, name] of [
      [1, "/"],
      [31, "/var"],
      [32, "/var/log"],
    ])
      s.push({ ...base, metric: "storage_used_pct", value: 40, ifindex: null, if_name: null, row, row_name: name });
    s.push({ ...base, metric: "rtt_ms", value: rtt, ifindex: null, if_name: null, row: null, row_name: null });
    s.push({ ...base, metric: "sys_uptime_secs", value: 86400, ifindex: null, if_name: null, row: null, row_name: null });
    return s;
  };
  const PER_POLL = poll(nodes[0], 0).length;
  const emit = (samples) => ctx.bus.emit("polling.sample", { samples });

  // warm-up: directory rows cached, node states written, the evaluation path compiled
  for (let r = 0; r < 3; r++) for (const n of nodes) await emit(poll(n, Date.now()));
  await engine.flushNow();

  const round = async (cpuOf) => {
    let i = 0;
    for (const n of nodes) {
      await emit(poll(n, Date.now(), cpuOf(n)));
      if (++i % 20 === 0) await yieldLoop(); // polls arrive from I/O: let timers (the flush) run
    }
  };

  phase("warm-up done");
  // Three repetitions of each (the machine is shared: medians, with every run printed).
  const churny = new Set(nodes.filter((_, i) => i % 100 === 7));
  const normalRates = [];
  const churnRates = [];
  let transitions = 0;
  for (let rep = 0; rep < 3; rep++) {
    let e0 = engine.stats().samples_evaluated;
    let t0 = performance.now();
    for (let r = 0; r < ROUNDS; r++) await round(() => 10);
    normalRates.push(Math.round((engine.stats().samples_evaluated - e0) / ((performance.now() - t0) / 1000)));
    // churn: 1 % of the nodes cross the CPU bounds each round (fire one round, clear the next)
    const tBefore = engine.stats().transitions;
    e0 = engine.stats().samples_evaluated;
    t0 = performance.now();
    for (let r = 0; r < ROUNDS * 2; r++) await round((n) => (churny.has(n) && r % 2 === 0 ? 99 : 10));
    await engine.flushNow();
    churnRates.push(Math.round((engine.stats().samples_evaluated - e0) / ((performance.now() - t0) / 1000)));
    transitions += engine.stats().transitions - tBefore;
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rate = median(normalRates);
  out("samples_per_sec", rate);
  out("samples_per_sec_runs", normalRates.join("/"));
  out("samples_per_sec_churn", median(churnRates));
  out("samples_per_sec_churn_runs", churnRates.join("/"));
  out("transitions_churn", transitions);

  // ---- latency: crossing sample → alerts.fired ----
  const waiters = new Map();
  ctx.bus.on("alerts.fired", (t) => waiters.get(t.incident_key)?.(performance.now()));
  ctx.bus.on("alerts.resolved", (t) => waiters.get(`clear:${t.incident_key}`)?.(performance.now()));
  const wait = (key) => new Promise((resolve) => waiters.set(key, resolve));
  const trial = async (i) => {
    const node = nodes[(i * 7) % nodes.length];
    const key = `node:${node}:${rttRule}`;
    const fired = wait(key);
    const start = performance.now();
    await emit([
      {
        node_id: node,
        metric: "rtt_ms",
        value: 250,
        at_unix_ms: Date.now(),
        ifindex: null,
        if_name: null,
        row: null,
        row_name: null,
        pool: "default",
        poller_id: "bench",
        backfill: false,
      },
    ]);
    const ms = (await fired) - start;
    const cleared = wait(`clear:${key}`);
    await emit([
      {
        node_id: node,
        metric: "rtt_ms",
        value: 5,
        at_unix_ms: Date.now(),
        ifindex: null,
        if_name: null,
        row: null,
        row_name: null,
        pool: "default",
        poller_id: "bench",
        backfill: false,
      },
    ]);
    await cleared;
    waiters.delete(key);
    waiters.delete(`clear:${key}`);
    return ms;
  };

  phase("throughput done");
  const quiet = [];
  for (let i = 0; i < TRIALS; i++) {
    quiet.push(await trial(i));
    await sleep(Math.random() * 10);
  }
  out("fire_ms_p50", pct(quiet, 50).toFixed(1));
  out("fire_ms_p99", pct(quiet, 99).toFixed(1));

  // under load: polls of every node keep arriving at ~20 % of the measured rate, in bursts every 10 ms
  phase("quiet latency done");
  let loading = true;
  const perTick = Math.max(1, Math.round((rate * 0.2) / PER_POLL / 100));
  const load = (async () => {
    let i = 0;
    while (loading) {
      const tick = performance.now();
      for (let j = 0; j < perTick; j++) await emit(poll(nodes[i++ % nodes.length], Date.now()));
      await sleep(Math.max(0, 10 - (performance.now() - tick)));
    }
  })();
  const loaded = [];
  for (let i = 0; i < TRIALS; i++) {
    loaded.push(await trial(i + TRIALS));
    await sleep(Math.random() * 10);
  }
  loading = false;
  await load;
  out("fire_load_ms_p50", pct(loaded, 50).toFixed(1));
  out("fire_load_ms_p99", pct(loaded, 99).toFixed(1));
  out("load_samples_per_sec", perTick * PER_POLL * 100);

  phase("load latency done");
  const ruleCount = (await q(`SELECT count(*)::int AS n FROM ${ctx.store.table("thresholds")}`)).rows[0].n;
  out("nodes", NODES);
  out("rules", ruleCount);
  out("samples_per_poll", PER_POLL);
  out("flushes", engine.stats().flushes);
} finally {
  phase("stopping");
  await kernel?.stop();
  phase("stopped");
  rmSync(dataDir, { recursive: true, force: true });
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
