/* global fetch */
// HTTP load: a mix of reads and writes at 100 connections for 60 s with autocannon (`npm run bench:http-load`; needs
// `npm run build` first).
//
// Starts PostgreSQL (DATABASE_URL when set, else an embedded server in a temporary folder), makes a fresh database on
// it and starts `node dist/core/main.js` on that database as a child process (every built-in plugin, no embedded
// poller, no passive listener, a free loopback port). The inventory and history are seeded directly in PostgreSQL:
// 10 site folders × 5 racks, NODES (default 3000) nodes; 8 interfaces per node with their latest in/out rates
// (polling.latest) and one hour of per-minute samples for a quarter of them (polling.samples); HISTORY (default
// 200 000) alert history rows over 30 days. Then ANALYZE.
//
// The load (autocannon, in this process, one instance per route class, all at once, keep-alive connections, the
// admin's bearer token): reads GET /nodes?limit=100 (30 connections), GET /alerts/history?limit=100 (20),
// GET /metrics/interface-top?metric=throughput (latest, 15) and ?agg=avg_15m (5); writes POST /nodes then DELETE
// /nodes/:id of the node just made (12), POST /thresholds then DELETE /thresholds/:id (10), POST /mutes/bulk of a
// random node (8). 100 connections, DURATION (default 60) s. The service's RSS (VmRSS of its process, and of the
// embedded PostgreSQL's processes summed) is sampled every second from /proc/<pid>/status: before (after a 10 s warm-up
// at 10 connections), during, and after (5 s after the load, and again after a forced pause of 10 s).
// Prints, per route class, requests/s, p50/p99 latency, errors (connection errors + timeouts), non-2xx; the totals;
// the RSS figures; the load average.
//
// The floor: a reference server (bench/lib/http-reference.mjs: node:http + pg, no framework) runs on the same database
// and answers the read classes with the service's SQL and the same bytes (checked first). Each read class is timed
// unloaded against both (21 sequential requests, median), and after the service's run the same mix runs again for
// BENCH_REFERENCE_SECS (default 30) with the read classes sent to the reference (the writes still to the service):
// each read class's requests/s is printed as a ratio to the reference's. Then the goals of issue 29, met or MISSED.
// BENCH_DURATION_SECS=600 is the long mode: RSS every 10 s and the means of its thirds.
import autocannon from "autocannon";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { benchStore, bootKernel, load, MAIN, print, QUIET_KERNEL_ENV } from "./lib/kernel.mjs";
import { seedHttpLoad } from "./lib/http-seed.mjs";
import { descendants, procCpuSecs, rssMb, sleep } from "./lib/flows-peers.mjs";
import { startReference } from "./lib/http-reference-process.mjs";

const NODES = Number(process.env.BENCH_NODES ?? 3000);
const HISTORY = Number(process.env.BENCH_HISTORY_ROWS ?? 200_000);
const DURATION = Number(process.env.BENCH_DURATION_SECS ?? 60);
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const SITES = 10;
const RACKS = 5;
const IFS = 8;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:http-load does).`);
  process.exit(1);
}

const token = randomBytes(24).toString("hex");
const { dataDir, database, cleanup } = benchStore("http");

/** Process ids of the embedded PostgreSQL (this process's descendants named postgres: the postmaster and its backends). */
function postgresPids() {
  return descendants(process.pid).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "postgres";
    } catch {
      return false;
    }
  });
}
const pgRssMb = () => postgresPids().reduce((s, p) => s + (rssMb(p) ?? 0), 0);

/** Median of `n` sequential requests (ms). */
async function unloadedMedian(url, headers, n = 21) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const r = await fetch(url, { headers });
    await r.arrayBuffer();
    if (!r.ok) throw new Error(`${url}: ${r.status}`);
    times.push(performance.now() - s);
  }
  return times.sort((a, b) => a - b)[n >> 1];
}

/** A summary of one autocannon result. */
function summary(r) {
  const non2xx = r.non2xx ?? 0;
  return {
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx,
    statuses: Object.entries(r.statusCodeStats ?? {})
      .map(([k, v]) => `${k}:${v.count}`)
      .join(","),
  };
}

async function main() {
  print("http_load_machine", `${cpus().length}x ${cpus()[0]?.model ?? "?"}; load ${load()}`);
  const dbUrl = await database();
  const kernel = await bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: dbUrl,
    NMS_BOOTSTRAP_TOKEN: token,
    ...QUIET_KERNEL_ENV,
  });
  const pid = kernel.child.pid;
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  const rssSamples = [];
  let sampler = null;
  let reference = null;
  try {
    const t0 = performance.now();
    await seedHttpLoad(db, { nodes: NODES, history: HISTORY, ifs: IFS, sites: SITES, racks: RACKS });
    print("http_load_seed_secs", ((performance.now() - t0) / 1000).toFixed(1));
    const nodeIds = (await db.query("SELECT id FROM inventory.nodes ORDER BY name")).rows.map((r) => r.id);
    print(
      "http_load_seed",
      `nodes=${nodeIds.length} latest_rows=${(await db.query("SELECT count(*)::int AS n FROM polling.latest")).rows[0].n} samples=${(await db.query("SELECT count(*)::int AS n FROM polling.samples")).rows[0].n} history=${HISTORY}`,
    );

    const auth = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const url = kernel.url;
    // Check every route once (and that interface-top answers rows).
    const top = await (await fetch(`${url}/api/v1/metrics/interface-top?metric=throughput&limit=10`, { headers: auth })).json();
    const entries = top.entries ?? top;
    print("http_load_interface_top_rows", Array.isArray(entries) ? entries.length : JSON.stringify(top).slice(0, 200));

    let seq = 0;
    const pick = () => nodeIds[Math.floor(Math.random() * nodeIds.length)];
    const until = () => new Date(Date.now() + 3_600_000).toISOString();
    /** onResponse that keeps the id of what was just made, for the DELETE that follows. */
    const keepId = (status, body, context) => {
      try {
        context.id = status < 300 ? JSON.parse(body).id : undefined;
      } catch {
        context.id = undefined;
      }
    };
    const del = (base) => ({
      method: "DELETE",
      setupRequest: (req, context) => ({ ...req, path: `${base}/${context.id ?? "00000000-0000-4000-8000-000000000000"}` }),
    });
    const classes = {
      read_nodes: { share: 30, requests: [{ method: "GET", path: "/api/v1/nodes?limit=100" }] },
      read_alert_history: { share: 20, requests: [{ method: "GET", path: "/api/v1/alerts/history?limit=100" }] },
      read_interface_top: { share: 15, requests: [{ method: "GET", path: "/api/v1/metrics/interface-top?metric=throughput&limit=10" }] },
      read_interface_top_avg15m: { share: 5, requests: [{ method: "GET", path: "/api/v1/metrics/interface-top?metric=throughput&agg=avg_15m&limit=10" }] },
      write_node_create_delete: {
        share: 12,
        requests: [
          {
            method: "POST",
            path: "/api/v1/nodes",
            setupRequest: (req) => {
              const n = ++seq;
              return {
                ...req,
                body: JSON.stringify({ name: `load-${process.pid}-${n}`, address: `10.${200 + ((n >> 16) % 50)}.${(n >> 8) & 255}.${n & 255}` }),
              };
            },
            onResponse: keepId,
          },
          del("/api/v1/nodes"),
        ],
      },
      write_threshold_create_delete: {
        share: 10,
        requests: [
          {
            method: "POST",
            path: "/api/v1/thresholds",
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ metric: "cpu_util", scope_level: "node", scope_ids: [pick()], direction: "above", warning: 80, critical: 95 }),
            }),
            onResponse: keepId,
          },
          del("/api/v1/thresholds"),
        ],
      },
      write_mute: {
        share: 8,
        requests: [
          {
            method: "POST",
            path: "/api/v1/mutes/bulk",
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ node_ids: [pick()], metric_name: "cpu_util", reason: "http load bench", until: until() }),
            }),
          },
        ],
      },
    };
    const only = process.env.BENCH_CLASSES?.split(",");
    if (only) for (const n of Object.keys(classes)) if (!only.includes(n)) delete classes[n];
    // The reference server on the same database; every read class must answer it the same bytes as the service.
    reference = await startReference(dbUrl);
    print("http_load_reference", reference.url);
    for (const [n, c] of Object.entries(classes)) {
      if (!n.startsWith("read_")) continue;
      // The service first: a windowed read computes the rollups the reference then reads.
      const a = await fetch(`${url}${c.requests[0].path}`, { headers: auth }).then(async (r) => [await r.text(), r.headers.get("x-next-cursor")]);
      const b = await fetch(`${reference.url}${c.requests[0].path}`).then(async (r) => [await r.text(), r.headers.get("x-next-cursor")]);
      print(
        `http_load_${n}_same_as_reference`,
        a[0] === b[0] && a[1] === b[1] ? `yes (${a[0].length} bytes)` : `NO (service ${a[0].length} bytes, reference ${b[0].length})`,
      );
    }
    // Unloaded latency: 21 sequential requests (median), the service and the reference; and the goals' other reads.
    const unloaded = {};
    for (const [n, c] of Object.entries(classes)) {
      if (!n.startsWith("read_")) continue;
      unloaded[n] = await unloadedMedian(`${url}${c.requests[0].path}`, auth);
      const ref = await unloadedMedian(`${reference.url}${c.requests[0].path}`, {});
      print(`http_load_${n}_unloaded_median_ms`, `${unloaded[n].toFixed(1)} (reference ${ref.toFixed(1)})`);
    }
    unloaded.read_events = await unloadedMedian(`${url}/api/v1/events?limit=100`, auth);
    print("http_load_read_events_unloaded_median_ms", unloaded.read_events.toFixed(1));
    for (const agg of ["max_15m", "avg_1h", "max_1h"]) {
      unloaded[`read_interface_top_${agg}`] = await unloadedMedian(`${url}/api/v1/metrics/interface-top?metric=throughput&agg=${agg}&limit=10`, auth);
      print(`http_load_read_interface_top_${agg}_unloaded_median_ms`, unloaded[`read_interface_top_${agg}`].toFixed(1));
    }
    const run = (name, c, connections, duration, target = url) =>
      new Promise((resolve, reject) => {
        const inst = autocannon(
          { url: target, connections, duration, headers: auth, requests: c.requests, timeout: 30, excludeErrorStats: false },
          (err, res) => (err ? reject(err) : resolve([name, res])),
        );
        inst.on("error", reject);
      });

    // Warm-up: 10 s at a tenth of the connections, every class (JIT, pools, caches), then the "before" RSS.
    await Promise.all(Object.entries(classes).map(([n, c]) => run(n, c, Math.max(1, Math.round((c.share * CONNS) / 1000)), 10)));
    await sleep(2000);
    const before = rssMb(pid);
    const pgBefore = pgRssMb();
    print("http_load_rss_before_mb", `${before} (postgres ${pgBefore}) load=${load()}`);

    const cpuOf = () => ({ service: procCpuSecs(pid), postgres: postgresPids().reduce((sum, p) => sum + procCpuSecs(p), 0), bench: process.cpuUsage() });
    const cpu0 = cpuOf();
    sampler = setInterval(() => rssSamples.push(rssMb(pid)), 1000);
    const loadStart = load();
    const results = Object.fromEntries(
      await Promise.all(Object.entries(classes).map(([n, c]) => run(n, c, Math.max(1, Math.round((c.share * CONNS) / 100)), DURATION))),
    );
    clearInterval(sampler);
    sampler = null;
    const loadEnd = load();
    let totalReq = 0;
    let totalErr = 0;
    let totalNon2xx = 0;
    console.log(
      "\n| class | conns | requests | req/s | p50 ms | p99 ms | max ms | errors | non-2xx | statuses |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    );
    for (const [name, r] of Object.entries(results)) {
      const s = summary(r);
      totalReq += s.requests;
      totalErr += s.errors + s.timeouts;
      totalNon2xx += s.non2xx;
      console.log(
        `| ${name} | ${r.connections} | ${s.requests} | ${Math.round(s.rps)} | ${s.p50} | ${s.p99} | ${s.max} | ${s.errors + s.timeouts} | ${s.non2xx} | ${s.statuses} |`,
      );
      print(
        `http_load_${name}`,
        `conns=${r.connections} requests=${s.requests} rps=${Math.round(s.rps)} p50_ms=${s.p50} p99_ms=${s.p99} max_ms=${s.max} errors=${s.errors} timeouts=${s.timeouts} non2xx=${s.non2xx} statuses=${s.statuses}`,
      );
    }
    print(
      "http_load_total",
      `connections=${CONNS} secs=${DURATION} requests=${totalReq} rps=${Math.round(totalReq / DURATION)} errors=${totalErr} non2xx=${totalNon2xx}`,
    );
    print("http_load_load_avg", `start=${loadStart} end=${loadEnd}`);
    const cpu1 = cpuOf();
    const benchCpu = process.cpuUsage(cpu0.bench);
    print(
      "http_load_cpu_pct_of_one_core",
      `service=${Math.round(((cpu1.service - cpu0.service) / DURATION) * 100)} postgres=${Math.round(((cpu1.postgres - cpu0.postgres) / DURATION) * 100)} autocannon(bench process)=${Math.round(((benchCpu.user + benchCpu.system) / 1e6 / DURATION) * 100)}`,
    );
    await sleep(5000);
    const after = rssMb(pid);
    await sleep(10000);
    const after15 = rssMb(pid);
    const during = rssSamples.filter((x) => x !== null);
    print(
      "http_load_rss_mb",
      `before=${before} during_min=${Math.min(...during)} during_max=${Math.max(...during)} first_10s_max=${Math.max(...during.slice(0, 10))} last_10s_max=${Math.max(...during.slice(-10))} after_5s=${after} after_15s=${after15}`,
    );
    // Every 5 s for a short run; every 10 s for a long one (BENCH_DURATION_SECS=600: is the heap flat after warm-up?).
    const every = DURATION >= 300 ? 10 : 5;
    print(`http_load_rss_series_mb_every_${every}s`, during.filter((_, i) => i % every === 0).join(","));
    if (DURATION >= 300) {
      const third = Math.floor(during.length / 3);
      const mean = (xs) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));
      print("http_load_rss_thirds_mean_mb", `${mean(during.slice(0, third))},${mean(during.slice(third, 2 * third))},${mean(during.slice(2 * third))}`);
    }

    // The floor: the same mix again, its read classes answered by the reference server (same database, same SQL, same
    // bytes), the writes still by the service so that the machine carries the same write load.
    const refSecs = Number(process.env.BENCH_REFERENCE_SECS ?? Math.min(DURATION, 30));
    const refCpu0 = { ...cpuOf(), reference: procCpuSecs(reference.child.pid) };
    const refResults = Object.fromEntries(
      await Promise.all(
        Object.entries(classes).map(([n, c]) =>
          run(n, c, Math.max(1, Math.round((c.share * CONNS) / 100)), refSecs, n.startsWith("read_") ? reference.url : url),
        ),
      ),
    );
    console.log("\n| read class | service req/s | reference req/s | ratio | service p99 ms | reference p99 ms |\n| --- | --- | --- | --- | --- | --- |");
    const ratios = {};
    for (const [name, r] of Object.entries(refResults)) {
      if (!name.startsWith("read_")) continue;
      const svc = summary(results[name]);
      const ref = summary(r);
      ratios[name] = svc.rps / ref.rps;
      console.log(`| ${name} | ${Math.round(svc.rps)} | ${Math.round(ref.rps)} | ${ratios[name].toFixed(2)} | ${svc.p99} | ${ref.p99} |`);
      print(
        `http_load_${name}_vs_reference`,
        `ratio=${ratios[name].toFixed(2)} service_rps=${Math.round(svc.rps)} reference_rps=${Math.round(ref.rps)} reference_p99_ms=${ref.p99} reference_errors=${ref.errors + ref.timeouts} reference_non2xx=${ref.non2xx}`,
      );
    }
    print("http_load_reference_load_avg", `end=${load()} secs=${refSecs}`);
    // CPU per request, the figure contention distorts least: the service's (and PostgreSQL's) ms of CPU per request of
    // the mix, against the reference phase's (reference + service for the writes + PostgreSQL).
    const refCpu1 = { ...cpuOf(), reference: procCpuSecs(reference.child.pid) };
    const refReq = Object.values(refResults).reduce((sum, r) => sum + r.requests.total, 0);
    const perReq = (secs, n) => ((secs * 1000) / Math.max(1, n)).toFixed(2);
    print(
      "http_load_cpu_ms_per_request",
      `service_run: service=${perReq(cpu1.service - cpu0.service, totalReq)} postgres=${perReq(cpu1.postgres - cpu0.postgres, totalReq)}; ` +
        `reference_run: reference=${perReq(refCpu1.reference - refCpu0.reference, refReq)} service=${perReq(refCpu1.service - refCpu0.service, refReq)} postgres=${perReq(refCpu1.postgres - refCpu0.postgres, refReq)}`,
    );

    // The goals of issue 29, judged on this run.
    const reads = Object.keys(results).filter((n) => n.startsWith("read_"));
    const goal = (name, ok, detail) => print(`goal_${name}`, `${ok ? "met" : "MISSED"} (${detail})`);
    goal("total_rps_750", totalReq / DURATION >= 750, `${Math.round(totalReq / DURATION)} req/s`);
    goal("zero_errors", totalErr === 0 && totalNon2xx === 0, `errors=${totalErr} non2xx=${totalNon2xx}`);
    for (const n of reads) goal(`${n}_p99_under_100ms`, summary(results[n]).p99 < 100, `${summary(results[n]).p99} ms`);
    for (const n of reads) goal(`${n}_half_the_reference`, ratios[n] >= 0.5, `${ratios[n].toFixed(2)}x`);
    for (const n of ["read_nodes", "read_alert_history", "read_events"]) goal(`${n}_unloaded_under_10ms`, unloaded[n] < 10, `${unloaded[n].toFixed(1)} ms`);
    for (const n of Object.keys(unloaded).filter((x) => x.startsWith("read_interface_top")))
      goal(`${n}_unloaded_under_20ms`, unloaded[n] < 20, `${unloaded[n].toFixed(1)} ms`);
    print("http_load_postgres_rss_mb", `before=${pgBefore} after=${pgRssMb()}`);
    // Where a node list page's time goes: the inventory repository's statement (first page, no filter), in PostgreSQL.
    const plan = await db.query(
      `EXPLAIN (ANALYZE, BUFFERS)
       SELECT n.id, n.name, host(n.address) AS address, d.effective_pool, d.effective_tags, lower(n.name) AS name_key
         FROM inventory.nodes n JOIN inventory.node_directory d ON d.id = n.id
        WHERE ($1::uuid[] IS NULL OR d.folder_path && $1::uuid[])
        ORDER BY lower(n.name), n.id LIMIT 101`,
      [null],
    );
    for (const r of plan.rows) {
      const l = r["QUERY PLAN"];
      if ((/actual time/.test(l) && !/never executed/.test(l)) || /Execution Time|Sort Method/.test(l)) print("# plan nodes_list", l);
    }
    print(
      "http_load_rows_after",
      `nodes=${(await db.query("SELECT count(*)::int AS n FROM inventory.nodes")).rows[0].n} mutes=${(await db.query("SELECT count(*)::int AS n FROM alerts.mutes")).rows[0].n}`,
    );
  } finally {
    if (sampler) clearInterval(sampler);
    await reference?.stop();
    await db.end();
    await kernel.stop().catch((e) => console.error(e.message));
    await cleanup();
  }
}

await main().catch(async (err) => {
  console.error(err);
  await cleanup();
  process.exit(1);
});
process.exit(0);
