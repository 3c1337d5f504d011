// Flow collector throughput vs nfcapd (`npm run bench:flows-throughput`; needs `npm run build` first).
//
// The service: `node dist/core/main.js` as a child process (embedded PostgreSQL in a fresh data dir, every built-in
// plugin, no embedded poller, syslog/trap listeners off), the flows plugin's UDP listener on a free port of 127.0.0.1,
// every flows setting at its default (flushMs 5000: BENCH_FLUSH_MS to change)
// (maxKeys 500000, 8 MiB receive buffer asked for). One inventory node per exporter address, so every record is
// attributed. The reference: nfcapd (nfdump 1.7.1, -B 8 MiB) started fresh for every step, its flows counted with
// `nfdump -R dir -I` after it exits. The kernel grants both at most net.core.rmem_max.
//
// The traffic (bench/lib/flows-peers.mjs): BENCH_EXPORTERS (default 100) exporters, each a socket bound to its own
// 127.0.1.x address, NetFlow v9 (30 records of 16 fields per datagram) or IPFIX (28 records of 14 fields), IPv4
// addresses, ports, protocol, TCP flags, interfaces, bytes, packets, start/end times and AS numbers, 8 distinct
// datagrams per exporter (24 000 distinct flows per format), templates first and again every 1000 datagrams of an
// exporter, sequence numbers and export times correct. A child process paces the datagrams by the clock, round-robin
// over the exporters.
//
// Method: first a warm-up of the service (BENCH_WARMUP_SECS, default 3, at 50k records/s per format; not counted). Then
// per format, for each receiver, the offered rate steps up (BENCH_V9_RATES / BENCH_IPFIX_RATES, records/s),
// BENCH_STEP_SECS (default 3) seconds per step, BENCH_REPEATS (default 1) ladders per receiver, alternating; the figures
// are the medians. After a step the receiver's socket queue must be empty, then the count
// settle (the service: the sum of `records` of GET /flow/exporters, i.e. records decoded, attributed, aggregated and
// written to the minute rollups; nfcapd: flows in its file). A step is lossless when that count grew by exactly what
// was sent. The ladder stops at the first step that loses; the figure is the sender's measured rate at the best
// lossless step. Sender and receivers share this machine's cores. The whole run gives up new steps after
// BENCH_MAX_SECS (default 540 s) and prints what it has.
// Prints flows_<format>_ours_lossless_records_per_sec, flows_<format>_nfcapd_lossless_records_per_sec,
// flows_<format>_ratio, a table, and a `# step …` line per step (CPU of the service + its PostgreSQL, of nfcapd, of the
// sender, in % of one core over the step; listener counters; UDP socket drops; load).
import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { bootKernel, killKernels, load, MAIN, print } from "./lib/kernel.mjs";
import {
  apiClient,
  drained,
  profileSummary,
  exporterAddresses,
  procCpuSecs,
  sendFlows,
  sleep,
  startNfcapd,
  treeCpuSecs,
  udpSocket,
} from "./lib/flows-peers.mjs";

const EXPORTERS = Number(process.env.BENCH_EXPORTERS ?? 100);
const STEP_SECS = Number(process.env.BENCH_STEP_SECS ?? 3);
const MAX_SECS = Number(process.env.BENCH_MAX_SECS ?? 540);
const FORMATS = (process.env.BENCH_FORMATS ?? "v9,ipfix").split(",").filter(Boolean);
// Up to 3.2M records/s: nfcapd took 1.6M without loss on a quiet machine, so a ladder ending there only bounds it from below.
const DEFAULT_RATES = "50000,100000,200000,400000,600000,800000,1000000,1200000,1400000,1600000,2000000,2400000,3200000";
const RATES = {
  v9: process.env.BENCH_V9_RATES ?? DEFAULT_RATES,
  ipfix: process.env.BENCH_IPFIX_RATES ?? DEFAULT_RATES,
};
/** Ladders per receiver and format; the figures are the medians (one lossy step is often one hiccup of a receiver). */
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 1));
const RECEIVERS = (process.env.BENCH_RECEIVERS ?? "ours,nfcapd").split(",").filter(Boolean);
/** The service's flush interval (ms): the plugin's default unless told. */
const FLUSH_MS = Number(process.env.BENCH_FLUSH_MS ?? 5000);
/** A directory: the service is CPU-profiled (bench/lib/flows-prof-preload.mjs) into it, and the profile's top self-time functions are printed at the end. */
const PROF_DIR = process.env.BENCH_CPU_PROF ?? null;

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:flows-throughput does).`);
  process.exit(1);
}

const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;
const phase = (name) => process.stderr.write(`[flows-throughput] ${name} at ${elapsed().toFixed(1)} s, load ${load()}\n`);
const pct = (secs, wall) => Math.round((secs / wall) * 100);

/** A UDP port free on 127.0.0.1 right now. */
const freeUdpPort = () =>
  new Promise((resolve) => {
    const s = createSocket("udp4");
    s.bind(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });

const token = randomBytes(24).toString("hex");
const dataDir = mkdtempSync(join(tmpdir(), "nms-bench-flows-"));
let nf = null;
const cleanup = () => {
  killKernels();
  nf?.kill();
  rmSync(dataDir, { recursive: true, force: true });
};
process.on("SIGINT", () => (cleanup(), process.exit(130)));

print("flows_throughput_machine", `${cpus().length}cpu,load=${load()},node=${process.version}`);
print(
  "flows_throughput_method",
  `${EXPORTERS} exporters (127.0.1.x), ${STEP_SECS}s per step, v9 30 and IPFIX 28 records per datagram, sender+receivers on the same cores`,
);

const ourPort = await freeUdpPort();
let kernel = null;
const results = {};
try {
  kernel = await bootKernel({
    NMS_DATA_DIR: dataDir,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_LOG_LEVEL: "warn",
    NMS__pluginConfig__polling__embeddedPoller: "false",
    NMS__pluginConfig__events__syslog__udp: "null",
    NMS__pluginConfig__events__syslog__tcp: "null",
    NMS__pluginConfig__events__syslog__tls: "null",
    NMS__pluginConfig__events__traps__udp: "null",
    NMS__pluginConfig__flows__udp: String(ourPort),
    NMS__pluginConfig__flows__bindAddress: "127.0.0.1",
    NMS__pluginConfig__flows__flushMs: String(FLUSH_MS),
    ...(PROF_DIR ? { NODE_OPTIONS: `--import=${new URL("./lib/flows-prof-preload.mjs", import.meta.url).href}`, BENCH_CPU_PROF: PROF_DIR } : {}),
  });
  const api = apiClient(kernel.url, token);
  const addrs = exporterAddresses(EXPORTERS);
  for (const [i, address] of addrs.entries()) await api("POST", "/nodes", { name: `exporter-${String(i + 1).padStart(3, "0")}`, address });
  phase(`service ready on ${kernel.url}, flows udp ${ourPort}, ${EXPORTERS} exporter nodes`);

  const exporterTotals = async () => {
    const rows = await api("GET", "/flow/exporters");
    return { records: rows.reduce((s, r) => s + Number(r.records), 0), attributed: rows.filter((r) => r.node_id).length, exporters: rows.length };
  };
  const listener = async () => {
    const res = await api("GET", "/listeners");
    const l = res.listeners.find((x) => x.name === "flows.udp") ?? { counters: {} };
    return { received: Number(l.counters?.received ?? 0), malformed: Number(l.counters?.malformed ?? 0), dropped: Number(l.counters?.dropped ?? 0) };
  };
  /** Polls `count` until unchanged for quietMs. */
  const settle = async (count, quietMs = FLUSH_MS + 1500, maxMs = 60000) => {
    const t0 = performance.now();
    let last = await count();
    let changed = performance.now();
    while (performance.now() - changed < quietMs && performance.now() - t0 < maxMs) {
      await sleep(250);
      const n = await count();
      if (n !== last) {
        last = n;
        changed = performance.now();
      }
    }
    return { count: last, lastChangeMs: changed };
  };

  const stepOurs = async (version, rate, secs = STEP_SECS) => {
    const r0 = (await exporterTotals()).records;
    const c0 = await listener();
    const d0 = udpSocket(ourPort).drops;
    const cpu0 = treeCpuSecs(kernel.child.pid);
    const t0 = performance.now();
    const sent = await sendFlows({ port: ourPort, version, exporters: EXPORTERS, recordsPerSec: rate, secs });
    await drained(ourPort);
    // CPU over the sending (as for nfcapd), not the settle after it: the flush wait would dilute it.
    const wall = (performance.now() - t0) / 1000;
    const cpu = treeCpuSecs(kernel.child.pid) - cpu0;
    const { count } = await settle(async () => (await exporterTotals()).records);
    const c1 = await listener();
    const stored = count - r0;
    return {
      sent,
      stored,
      extra:
        `service_cpu_pct=${pct(cpu, wall)} listener_received=${c1.received - c0.received} ` +
        `listener_malformed=${c1.malformed - c0.malformed} listener_dropped=${c1.dropped - c0.dropped} socket_drops=${udpSocket(ourPort).drops - d0}`,
    };
  };

  const stepNfcapd = async (version, rate) => {
    const port = await freeUdpPort();
    nf = await startNfcapd(port);
    const cpu0 = procCpuSecs(nf.pid);
    const t0 = performance.now();
    const sent = await sendFlows({ port, version, exporters: EXPORTERS, recordsPerSec: rate, secs: STEP_SECS });
    await drained(port);
    const wall = (performance.now() - t0) / 1000;
    const cpu = procCpuSecs(nf.pid) - cpu0;
    const drops = udpSocket(port).drops;
    const r = await nf.stop();
    nf = null;
    return { sent, stored: r.flows, extra: `nfcapd_cpu_pct=${pct(cpu, wall)} socket_drops=${drops} nfcapd_sequence_failures=${r.sequenceFailures}` };
  };

  let timeUp = false;
  const ladder = async (format, receiver) => {
    const version = format === "v9" ? 9 : 10;
    let best = 0;
    let lostAt = null;
    for (const rate of RATES[format].split(",").map(Number)) {
      if (elapsed() > MAX_SECS) {
        timeUp = true;
        break;
      }
      const l = load();
      const r = await (receiver === "ours" ? stepOurs : stepNfcapd)(version, rate);
      const lost = r.sent.records - r.stored;
      print(
        "# step",
        `format=${format} receiver=${receiver} target=${rate} sent=${r.sent.records} send_rate=${r.sent.records_per_sec} stored=${r.stored} lost=${lost} ` +
          `sender_cpu_pct=${pct(r.sent.cpuSecs, r.sent.secs)} ${r.extra} load_before=${l}`,
      );
      if (lost !== 0) {
        lostAt = rate;
        break;
      }
      best = Math.max(best, r.sent.records_per_sec);
    }
    return { best, lostAt };
  };

  // Warm-up of the service (JIT, the first flush, templates learned), not counted: BENCH_WARMUP_SECS at 50k records/s per format.
  const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3);
  if (RECEIVERS.includes("ours") && WARMUP_SECS > 0) {
    for (const format of FORMATS) await stepOurs(format === "v9" ? 9 : 10, 50000, WARMUP_SECS);
    phase("service warmed up");
  }

  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  for (const format of FORMATS) {
    results[format] = {};
    const reps = Object.fromEntries(RECEIVERS.map((r) => [r, []]));
    // The receivers alternate within each repetition, so a disturbed minute hits both.
    for (let rep = 1; rep <= REPEATS; rep++)
      for (const receiver of RECEIVERS) {
        const r = await ladder(format, receiver);
        reps[receiver].push(r);
        phase(`${format} ${receiver} rep ${rep}: ${r.best} records/s lossless (first loss at ${r.lostAt ?? "none"})`);
      }
    for (const receiver of RECEIVERS) {
      const best = median(reps[receiver].map((r) => r.best));
      // "No loss up to the top step" only when the median repetition never lost.
      const lostAt = reps[receiver].find((r) => r.best === best)?.lostAt ?? null;
      results[format][receiver] = { best, lostAt };
      print(`flows_${format}_${receiver}_reps`, reps[receiver].map((r) => r.best).join(" / "));
    }
  }
  const t = await exporterTotals();
  print("flows_throughput_exporters_seen", `${t.exporters} (attributed to a node: ${t.attributed})`);
  if (timeUp) print("flows_throughput_note", `stopped stepping after ${MAX_SECS} s (BENCH_MAX_SECS)`);
  console.log("\n| format | ours records/s | nfcapd records/s | ratio |\n| --- | --- | --- | --- |");
  for (const [format, r] of Object.entries(results)) {
    const ours = r.ours?.best ?? 0;
    const ref = r.nfcapd?.best ?? 0;
    const capped = (x) => (x.lostAt === null ? " (no loss up to the top step)" : "");
    console.log(
      `| ${format} | ${ours}${r.ours ? capped(r.ours) : ""} | ${ref}${r.nfcapd ? capped(r.nfcapd) : ""} | ${ref ? (ours / ref).toFixed(2) : "n/a"} |`,
    );
    print(`flows_${format}_ours_lossless_records_per_sec`, ours);
    print(`flows_${format}_nfcapd_lossless_records_per_sec`, ref);
    print(`flows_${format}_ratio`, ref ? (ours / ref).toFixed(2) : "n/a");
  }
  print("flows_throughput_load_after", load());
  print("flows_throughput_secs", elapsed().toFixed(0));
} finally {
  phase("stopping");
  if (PROF_DIR && kernel) {
    kernel.child.kill("SIGUSR2");
    await sleep(3000);
  }
  await kernel?.stop().catch((e) => console.error(e.message));
  cleanup();
}
if (PROF_DIR) {
  for (const line of profileSummary(PROF_DIR)) print("# profile self", line);
  const loops = readdirSync(PROF_DIR).filter((f) => f.endsWith(".loop.json"));
  for (const f of loops) print("# service event loop delay", readFileSync(join(PROF_DIR, f), "utf8"));
}
process.exit(0);
