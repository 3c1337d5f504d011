// Sustained syslog ingest of the events plugin, with its memory over time (`npm run bench:events-sustained`; needs
// `npm run build` first).
//
// UDP from BENCH_UDP_CONNS loggen sockets (default 4), the rate split among them.
//
// The service as in bench/events-syslog.mjs (kernel in this process, embedded PostgreSQL, default pipeline settings,
// node 127.0.0.1, 100 event rules). loggen sends RFC 5424 200-byte messages over UDP for BENCH_DURATION_SECS (default
// 600) at BENCH_RATE msg/s; without BENCH_RATE the rate is 80 % of the UDP lossless rate that the last
// bench/events-syslog.mjs run on this machine recorded (BENCH_CACHE_DIR, default /tmp/nms-bench/events-syslog-last.json),
// or, when there is none, 80 % of a quick ladder measured here first (one repetition, 5 s steps). Every 10 s it
// samples this process's RSS and heap (the kernel runs in it; PostgreSQL's processes are listed apart) and the
// pipeline's counters. At the end it waits for the pipeline to drain and counts what was stored (GET /events/stats).
// Prints: events_sustained_offered_per_sec (loggen's measured rate), events_sustained_per_sec (stored / first send →
// last stored), events_sustained_lost, events_sustained_rss_mb_start (first sample under load) / _end / _max,
// events_sustained_rss_mb_idle (before the load), events_sustained_rss_growth_pct ((end − start) / start), and one
// `# sample` line per 10 s.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  CACHE,
  descendantsCpuSecs,
  descendantsRssMb,
  listenerCounters,
  load,
  machine,
  print,
  runLoggen,
  settle,
  sleep,
  startEventsKernel,
  udpSocketDrops,
  matchReceiveBuffers,
} from "./lib/events-peers.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION_SECS ?? 600);
const SAMPLE_MS = 10000;
const mb = (b) => Math.round(b / 1048576);
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[events-sustained] ${name} at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s, load ${load()}\n`);

print("events_sustained_machine", machine());
let ev = null;
const rmem = matchReceiveBuffers();
print("events_sustained_rmem_max", rmem.rmemMax);
try {
  ev = await startEventsKernel(ROOT);
  const port = ev.ports["syslog.udp"];
  phase("kernel ready");

  let rate = Number(process.env.BENCH_RATE ?? 0);
  let rateFrom = "BENCH_RATE";
  if (!rate) {
    try {
      const last = JSON.parse(readFileSync(join(CACHE, "events-syslog-last.json"), "utf8"));
      if (last.udp_lossless_per_sec > 0) {
        rate = Math.round(last.udp_lossless_per_sec * 0.8);
        rateFrom = `80% of events_syslog_udp_lossless_per_sec=${last.udp_lossless_per_sec} (${last.at})`;
      }
    } catch {
      // none recorded
    }
  }
  if (!rate) {
    // A quick ladder here: the highest of these steps that loses nothing, 5 s each.
    let best = 0;
    for (const step of [2500, 5000, 7500, 10000, 20000, 40000, 60000, 80000]) {
      const since = new Date(Date.now() - 50).toISOString();
      const s = await runLoggen({ proto: "udp", port, perConn: step * 5, ratePerConn: step });
      const { count } = await settle(() => ev.stored("syslog", since));
      print("# ladder", `target=${step} sent=${s.sent} send_rate=${Math.round(s.rate)} stored=${count} load=${load()}`);
      if (count < s.sent) break;
      best = s.rate;
    }
    rate = Math.round(best * 0.8);
    rateFrom = `80% of a quick ladder here (${Math.round(best)}/s)`;
  }
  if (!rate) throw new Error("no lossless UDP rate to run at: set BENCH_RATE");
  print("events_sustained_rate_from", rateFrom);
  print("events_sustained_target_per_sec", rate);
  print("events_sustained_duration_secs", DURATION);

  // Let the ladder's writes settle, then the baseline.
  await settle(async () => ev.pipeline.stats().written, { quietMs: 3000 });
  const since = new Date(Date.now() - 50).toISOString();
  const rssIdle = process.memoryUsage().rss;
  const c0 = await listenerCounters(ev, "syslog.udp");
  const s0 = ev.pipeline.stats();
  const drops0 = udpSocketDrops(port);
  const cpu0 = process.cpuUsage();
  const pg0 = descendantsCpuSecs("postgres");
  const samples = [];
  const t0 = performance.now();
  // BENCH_UDP_CONNS senders (default 4, as bench/events-syslog.mjs): one sender's datagrams all land on one ingest worker.
  const conns = Math.max(1, Number(process.env.BENCH_UDP_CONNS ?? 4));
  const perConnRate = Math.ceil(rate / conns);
  const sending = runLoggen({ proto: "udp", port, perConn: perConnRate * DURATION, ratePerConn: perConnRate, conns, maxSecs: DURATION + 60 });
  let done = false;
  void sending.finally(() => (done = true));
  const sampler = (async () => {
    let next = t0 + SAMPLE_MS;
    while (!done) {
      await sleep(Math.max(0, next - performance.now()));
      next += SAMPLE_MS;
      const m = process.memoryUsage();
      const s = ev.pipeline.stats();
      const sample = {
        t: Math.round((performance.now() - t0) / 1000),
        rss: mb(m.rss),
        heap: mb(m.heapUsed),
        ext: mb(m.external + m.arrayBuffers),
        pg_rss: descendantsRssMb("postgres"),
        written: s.written - s0.written,
        queued: s.queued,
        queue_dropped: s.dropped_queue_full - s0.dropped_queue_full,
        socket_drops: udpSocketDrops(port) - drops0,
        load: load(),
      };
      samples.push(sample);
      print(
        "# sample",
        Object.entries(sample)
          .map(([k, v]) => `${k}=${v}`)
          .join(" "),
      );
    }
  })();
  const sent = await sending;
  await sampler;
  phase("sending done");
  const { lastChangeMs } = await settle(async () => ev.pipeline.stats().written, { quietMs: 2000 });
  const wall = (lastChangeMs - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const pg = descendantsCpuSecs("postgres") - pg0;
  const stored = await ev.stored("syslog", since);
  const c1 = await listenerCounters(ev, "syslog.udp");
  const s1 = ev.pipeline.stats();
  const rss = samples.map((s) => s.rss);
  const start = rss[0] ?? mb(rssIdle);
  const end = rss.at(-1) ?? start;
  print("events_sustained_offered_per_sec", Math.round(sent.rate));
  print("events_sustained_sent", sent.sent);
  print("events_sustained_stored", stored);
  print("events_sustained_per_sec", Math.round(stored / wall));
  print("events_sustained_lost", sent.sent - stored);
  print("events_sustained_rss_mb_idle", mb(rssIdle));
  print("events_sustained_rss_mb_start", start);
  print("events_sustained_rss_mb_end", end);
  print("events_sustained_rss_mb_max", Math.max(...rss, start));
  print("events_sustained_rss_growth_pct", (((end - start) / start) * 100).toFixed(1));
  print("events_sustained_rss_samples_mb", rss.join(","));
  print("events_sustained_heap_samples_mb", samples.map((s) => s.heap).join(","));
  print("events_sustained_pg_rss_samples_mb", samples.map((s) => s.pg_rss).join(","));
  print("events_sustained_node_cpu_pct", Math.round(((cpu.user + cpu.system) / 1e6 / wall) * 100));
  print("events_sustained_pg_cpu_pct", Math.round((pg / wall) * 100));
  print(
    "events_sustained_listener",
    `received=${c1.received - c0.received} dropped=${c1.dropped - c0.dropped} malformed=${c1.malformed - c0.malformed} socket_drops=${udpSocketDrops(port) - drops0} queue_dropped=${s1.dropped_queue_full - s0.dropped_queue_full} write_failures=${s1.write_failures - s0.write_failures}`,
  );
  print("events_sustained_load_after", load());
} finally {
  rmem.restore();
  phase("stopping");
  await ev?.stop().catch((e) => console.error(e));
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
