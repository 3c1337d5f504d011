// Syslog ingest benchmark of the events plugin vs rsyslog (`npm run bench:events-syslog`; needs `npm run build` first).
//
// The service: the kernel in this process (dist build, embedded PostgreSQL in a fresh data dir, plugins inventory +
// polling without its embedded poller + alerts + events, default pipeline settings), the syslog listeners on free
// loopback ports, the node 127.0.0.1 (every message is attributed to it) and 100 event rules (bench/lib/events-peers.mjs:
// 7 match every message and count it, the others match nothing). The reference: a private rsyslogd (imudp 2 threads,
// the receive buffer of RECEIVE_BUFFER_BYTES, as the service's, imtcp, imtcp TLS gtls anonymous) writing one parsed line per message into one file with
// asynchronous omfile. A second reference for what the service does (parse and store), case `ompgsql`: a private
// rsyslogd (imudp as above) storing every message as a row of Debian's SystemEvents table (rsyslog-pgsql) through its
// own PostgreSQL output, ompgsql (one INSERT per message, a transaction per batch), behind a LinkedList action queue of
// 200000 with 2 worker threads and batches of 1024 (BENCH_OMPGSQL_WORKERS, BENCH_OMPGSQL_BATCH), on the same PostgreSQL
// server as the service (the kernel's embedded one: database Syslog, role rsyslog). The sender for all: loggen
// (syslog-ng's generator, from the Debian package, unpacked), RFC 5424 200-byte messages (-P -s 200; -F on UDP),
// octet-counted framing on TCP and TLS.
//
// Method: for each case (udp, tcp, tls, ompgsql) and repetition, the offered rate steps up (BENCH_<CASE>_RATES, total msg/s; 0 =
// loggen as fast as it can) with BENCH_STEP_SECS seconds of messages per step (at least 20000); after each step the
// receiver is left to drain (its count unchanged for 2 s). A step is lossless when every message loggen reports sent
// was stored (the service: events counted by GET /events/stats since the step began; rsyslog: lines written; ompgsql:
// rows stored, read once its count has stopped growing, as its queue hides a backlog). The
// ladder stops at the first step that loses (TCP/TLS also once the receiver stores under 80 % of the target rate). The figure of a repetition is, at the best lossless step, loggen's
// measured send rate for UDP, and the end-to-end rate (stored / first send → last stored) for TCP and TLS (there a
// slow receiver throttles the sender and socket buffers hide a backlog, so the send rate would flatter it); the
// printed figure is the median over BENCH_REPEATS repetitions (default 3). Sender and receivers share this
// machine's cores (2 here), as the reference figures in ../shared/peers did.
// Prints, per case: events_syslog_<case>_lossless_per_sec, rsyslog_<case>_lossless_per_sec, events_syslog_<case>_ratio
// (and the per-repetition figures), and a `# step ...` line for every step (CPU of this process, of PostgreSQL, of
// rsyslogd and of loggen in % of one core over the step; listener counters; UDP socket drops; queue drops; load).
// The udp case also prints events_syslog_udp_receipt_lossless_per_sec / _receipt_ratio (the best step where every datagram
// was read, i.e. journaled, stored later or not) and events_syslog_udp_stored_per_sec (rows stored per second, first send
// to last row, at the best lossless step). TCP and TLS also print events_syslog_<case>_receipt_per_sec / _receipt_ratio:
// messages read and journaled per second, first sent to last read, at the best step (the service's ladder goes on past
// where storing falls behind while receipt keeps up: its journal holds the difference). The ompgsql case runs the UDP ladder against the reference only and prints
// rsyslog_ompgsql_lossless_per_sec, rsyslog_ompgsql_stored_per_sec, events_syslog_ompgsql_ratio = our stored rate over
// its stored rate, and events_syslog_ompgsql_lossless_ratio = the lossless send rates (n/a when udp was not run).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  CACHE,
  descendantsCpuSecs,
  listenerCounters,
  load,
  machine,
  median,
  print,
  procCpuSecs,
  runLoggen,
  settle,
  startEventsKernel,
  startProfile,
  startOmpgsql,
  startRsyslog,
  udpSocketDrops,
  matchReceiveBuffers,
} from "./lib/events-peers.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const STEP_SECS = Number(process.env.BENCH_STEP_SECS ?? 5);
/** A directory: every step against the service is CPU-profiled (V8 inspector, this process) and summarised. */
const PROF_DIR = process.env.BENCH_CPU_PROF ?? null;
// ompgsql is compared with the service's UDP figure of the same invocation, so it runs after udp (a stable sort).
const CASES = (process.env.BENCH_CASES ?? "udp,tcp,tls,ompgsql")
  .split(",")
  .filter(Boolean)
  .sort((a, b) => Number(a === "ompgsql") - Number(b === "ompgsql"));
const UDP_RATES = process.env.BENCH_UDP_RATES ?? "2500,5000,7500,10000,20000,40000,60000,80000,100000,120000";
const RATES = {
  udp: UDP_RATES,
  tcp: process.env.BENCH_TCP_RATES ?? "5000,10000,20000,40000,80000,0",
  tls: process.env.BENCH_TLS_RATES ?? "5000,10000,20000,40000,0",
  // The same ladder as the service's UDP case unless told otherwise: the ratio compares like with like.
  ompgsql: process.env.BENCH_OMPGSQL_RATES ?? UDP_RATES,
};
const OMPGSQL = { workers: Number(process.env.BENCH_OMPGSQL_WORKERS ?? 2), batch: Number(process.env.BENCH_OMPGSQL_BATCH ?? 1024), queueSize: 200000 };
/** Cases sent over UDP (the figure is loggen's send rate at the best lossless step). */
const viaUdp = (c) => c === "udp" || c === "ompgsql";
/**
 * UDP senders (loggen "connections": each its own socket and source port) for every UDP step, the service's and the
 * references' alike: a collector hears many devices, and the kernel spreads senders (by address and port) over the
 * sockets of the service's ingest workers, as over rsyslog's imudp threads. 1 gives the figures of before 2026-11-29.
 */
const UDP_CONNS = Number(process.env.BENCH_UDP_CONNS ?? 4);
/** Connections per step: UDP UDP_CONNS; TCP/TLS 1 up to 40k msg/s, 2 up to 80k, 4 above and unpaced (0). */
const connsFor = (proto, rate) => (proto === "udp" ? UDP_CONNS : rate === 0 || rate > 80000 ? 4 : rate > 40000 ? 2 : 1);
const pct = (secs, wall) => Math.round((secs / wall) * 100);
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[events-syslog] ${name} at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s, load ${load()}\n`);

if (PROF_DIR) mkdirSync(PROF_DIR, { recursive: true });
print("events_syslog_machine", machine());
print(
  "events_syslog_method",
  `loggen RFC5424 200B, ${STEP_SECS}s per step, ${REPEATS} repetitions (median), UDP from ${UDP_CONNS} sockets, sender+receiver on the same cores`,
);

let ev = null;
let rs = null;
let pgRef = null;
const rmem = matchReceiveBuffers();
print("events_syslog_rmem_max", rmem.rmemMax);
try {
  ev = await startEventsKernel(ROOT);
  rs = await startRsyslog();
  phase("kernel and rsyslogd ready");
  print(
    "events_syslog_ports",
    `events udp=${ev.ports["syslog.udp"]} tcp=${ev.ports["syslog.tcp"]} tls=${ev.ports["syslog.tls"]}; rsyslog udp=${rs.ports.udp} tcp=${rs.ports.tcp} tls=${rs.ports.tls}`,
  );
  if (CASES.includes("ompgsql")) {
    pgRef = await startOmpgsql({ adminUrl: ev.k.databaseUrl, ...OMPGSQL });
    phase("rsyslogd with ompgsql ready");
    print(
      "# ompgsql",
      `rsyslogd imudp 127.0.0.1:${pgRef.port} -> ompgsql -> database Syslog on the service's PostgreSQL (port ${new URL(ev.k.databaseUrl).port}); ` +
        `action queue LinkedList size=${OMPGSQL.queueSize} workers=${OMPGSQL.workers} batch=${OMPGSQL.batch} timeoutEnqueue=0`,
    );
  }
  let checked = false;

  /** One step against the service: returns {ok, sendRate}. */
  const stepEvents = async (proto, rate, rep) => {
    const conns = connsFor(proto, rate);
    const count = Math.max(20000, Math.round((rate || 100000) * STEP_SECS));
    const perConn = Math.ceil(count / conns);
    const lname = `syslog.${proto}`;
    const port = ev.ports[lname];
    const c0 = await listenerCounters(ev, lname);
    const s0 = ev.pipeline.stats();
    const drops0 = proto === "udp" ? udpSocketDrops(port) : 0;
    const since = new Date(Date.now() - 50).toISOString();
    const cpu0 = process.cpuUsage();
    const pg0 = descendantsCpuSecs("postgres");
    const prof = PROF_DIR ? await startProfile() : null;
    const t0 = performance.now();
    // Receipt over time: when the listeners had read (and journaled) every message sent, stored or not yet.
    const seen = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        seen.push([performance.now(), (await listenerCounters(ev, lname)).received - c0.received]);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const sent = await runLoggen({ proto, port, perConn, ratePerConn: rate ? Math.round(rate / conns) : 0, conns });
    const { count: stored, lastChangeMs } = await settle(() => ev.stored("syslog", since));
    watching = false;
    await watcher;
    const allReadAt = seen.find(([, n]) => n >= sent.sent)?.[0] ?? null;
    const receiptRate = allReadAt !== null ? sent.sent / ((allReadAt - t0) / 1000) : 0;
    if (prof) {
      const p = await prof.stop(join(PROF_DIR, `events-syslog-${proto}-${rate || "max"}-rep${rep}.cpuprofile`));
      print("# profile", `case=${proto} target=${rate || "max"} rep=${rep} busy_pct=${p.busyPct}`);
      for (const l of p.self) print("# profile self", l);
      for (const l of p.inclusive) print("# profile inclusive", l);
    }
    const wall = (lastChangeMs - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg = descendantsCpuSecs("postgres") - pg0;
    const c1 = await listenerCounters(ev, lname);
    const s1 = ev.pipeline.stats();
    const drops = proto === "udp" ? udpSocketDrops(port) - drops0 : 0;
    const lost = sent.sent - stored;
    print(
      "# step",
      `case=${proto} receiver=events rep=${rep} target=${rate || "max"} conns=${conns} sent=${sent.sent} send_rate=${Math.round(sent.rate)} stored=${stored} lost=${lost} ` +
        `stored_per_sec=${Math.round(stored / wall)} receipt_per_sec=${Math.round(receiptRate)} node_cpu_pct=${pct((cpu.user + cpu.system) / 1e6, wall)} pg_cpu_pct=${pct(pg, wall)} loggen_cpu_pct=${pct(sent.cpuSecs, sent.secs)} ` +
        `listener_received=${c1.received - c0.received} listener_dropped=${c1.dropped - c0.dropped} listener_malformed=${c1.malformed - c0.malformed} ` +
        `socket_drops=${drops} queue_dropped=${s1.dropped_queue_full - s0.dropped_queue_full} write_failures=${s1.write_failures - s0.write_failures} loggen_errors=${sent.errors} load=${load()}`,
    );
    if (!checked) {
      checked = true;
      const ev1 = (await ev.api("GET", "/events?limit=1")).items?.[0] ?? (await ev.api("GET", "/events?limit=1"))[0];
      print(
        "# sample",
        `node_id=${ev1?.node_id} (bench node ${ev.node.id}) action=${ev1?.action} rule_id=${ev1?.rule_id} malformed=${ev1?.malformed} app=${ev1?.app}`,
      );
    }
    // Receipt: every message loggen sent was read off the socket (and so appended to the ingest journal first).
    return { ok: lost <= 0, received: c1.received - c0.received >= sent.sent, sendRate: sent.rate, e2e: stored / wall, receiptRate };
  };

  /** One step against rsyslog. */
  const stepRsyslog = async (proto, rate, rep) => {
    const conns = connsFor(proto, rate);
    const count = Math.max(20000, Math.round((rate || 100000) * STEP_SECS));
    const perConn = Math.ceil(count / conns);
    const port = rs.ports[proto];
    const before = (await settle(rs.count, { quietMs: 1000 })).count;
    const drops0 = proto === "udp" ? udpSocketDrops(port) : 0;
    const r0 = rs.cpuSecs();
    const t0 = performance.now();
    const sent = await runLoggen({ proto, port, perConn, ratePerConn: rate ? Math.round(rate / conns) : 0, conns });
    const { count: after, lastChangeMs } = await settle(rs.count);
    const wall = (lastChangeMs - t0) / 1000;
    const written = after - before;
    const lost = sent.sent - written;
    const drops = proto === "udp" ? udpSocketDrops(port) - drops0 : 0;
    print(
      "# step",
      `case=${proto} receiver=rsyslog rep=${rep} target=${rate || "max"} conns=${conns} sent=${sent.sent} send_rate=${Math.round(sent.rate)} stored=${written} lost=${lost} ` +
        `stored_per_sec=${Math.round(written / wall)} rsyslog_cpu_pct=${pct(rs.cpuSecs() - r0, wall)} loggen_cpu_pct=${pct(sent.cpuSecs, sent.secs)} socket_drops=${drops} loggen_errors=${sent.errors} load=${load()}`,
    );
    return { ok: lost <= 0, sendRate: sent.rate, e2e: written / wall };
  };

  /** One step against rsyslog storing into PostgreSQL (ompgsql): rows stored once the count stops growing. */
  let sampled = false;
  const stepOmpgsql = async (_proto, rate, rep) => {
    const count = Math.max(20000, Math.round((rate || 100000) * STEP_SECS));
    const base = (await settle(pgRef.progress, { quietMs: 1000 })).count;
    const q0 = pgRef.queueStats();
    const drops0 = udpSocketDrops(pgRef.port);
    const r0 = pgRef.cpuSecs();
    const pg0 = descendantsCpuSecs("postgres");
    const t0 = performance.now();
    const sent = await runLoggen({
      proto: "udp",
      port: pgRef.port,
      perConn: Math.ceil(count / UDP_CONNS),
      ratePerConn: Math.round(rate / UDP_CONNS),
      conns: UDP_CONNS,
    });
    // Its queue hides a backlog (up to 200000 messages): wait until the rows stop growing (2 s unchanged).
    const { lastChangeMs } = await settle(pgRef.progress);
    const wall = (lastChangeMs - t0) / 1000;
    const rsCpu = pgRef.cpuSecs() - r0;
    const pgCpu = descendantsCpuSecs("postgres") - pg0;
    const stored = await pgRef.rowsAfter(base);
    const lost = sent.sent - stored;
    const drops = udpSocketDrops(pgRef.port) - drops0;
    const q1 = pgRef.queueStats();
    const qd = (k) => Number(q1[k] ?? 0) - Number(q0[k] ?? 0);
    print(
      "# step",
      `case=ompgsql receiver=rsyslog-ompgsql rep=${rep} target=${rate || "max"} conns=${UDP_CONNS} sent=${sent.sent} send_rate=${Math.round(sent.rate)} stored=${stored} lost=${lost} ` +
        `stored_per_sec=${Math.round(stored / wall)} rsyslog_cpu_pct=${pct(rsCpu, wall)} pg_cpu_pct=${pct(pgCpu, wall)} loggen_cpu_pct=${pct(sent.cpuSecs, sent.secs)} ` +
        `socket_drops=${drops} queue_discarded=${qd("discarded.full")} queue_full=${qd("full")} queue_max_since_start=${q1.maxqsize ?? "?"} ` +
        `drain_secs=${((lastChangeMs - t0) / 1000 - sent.secs).toFixed(1)} loggen_errors=${sent.errors} load=${load()}`,
    );
    if (!sampled) {
      sampled = true;
      const row = await pgRef.sample();
      print(
        "# sample",
        `ompgsql row: fromhost=${row?.fromhost} syslogtag=${row?.syslogtag} facility=${row?.facility} priority=${row?.priority} message_chars=${row?.len}`,
      );
    }
    if (pgRef.errors().trim()) print("# ompgsql stderr", JSON.stringify(pgRef.errors().trim().slice(-400)));
    return { ok: lost <= 0, sendRate: sent.rate, e2e: stored / wall };
  };

  // UDP: loggen's measured send rate (the offered rate; what the socket cannot take is lost). TCP/TLS: the sender is
  // throttled by a slow receiver and socket buffers (several MB each side) absorb a backlog, so the end-to-end rate
  // (stored / first send → last stored) is the figure.
  // Returns the figure, and the end-to-end stored rate of the step that gave it.
  const ladder = async (step, proto, rep) => {
    let best = 0;
    let e2e = 0;
    let receipt = 0;
    for (const rate of RATES[proto].split(",").map(Number)) {
      const r = await step(proto, rate, rep);
      // UDP: the send rate of a step where every datagram was read; TCP/TLS: the rate at which they were read (the
      // sender is throttled only by receipt there). Both: received and journaled, stored or not yet.
      const read = viaUdp(proto) ? r.sendRate : (r.receiptRate ?? 0);
      if (r.received && read > receipt) receipt = read;
      if (!r.ok) break;
      const figure = viaUdp(proto) ? r.sendRate : r.e2e;
      if (figure >= best) [best, e2e] = [figure, r.e2e];
      // TCP/TLS: a receiver that read and stored less than 80 % of the target rate end to end is saturated (the sender
      // waits on it); higher targets would only take longer to send the same throughput. (The service's receipt may
      // outrun its storing: the journal holds the difference, so its ladder goes on while receipt keeps up.)
      if (!viaUdp(proto) && rate > 0 && r.e2e < 0.8 * rate && !((r.receiptRate ?? 0) >= 0.8 * rate)) break;
    }
    return { best: Math.round(best), e2e: Math.round(e2e), receipt: Math.round(receipt) };
  };

  let oursUdp = null;
  let oursUdpStored = null;

  for (const proto of CASES) {
    if (proto === "ompgsql") {
      const ref = [];
      const stored = [];
      const loads = [];
      for (let rep = 1; rep <= REPEATS; rep++) {
        loads.push(load());
        const r = await ladder(stepOmpgsql, "ompgsql", rep);
        ref.push(r.best);
        stored.push(r.e2e);
        phase(`ompgsql rep ${rep}: rsyslog+ompgsql ${r.best}/s (stored ${r.e2e}/s end to end)`);
      }
      const b = median(ref);
      const bStored = median(stored);
      print("rsyslog_ompgsql_lossless_per_sec", b);
      print("rsyslog_ompgsql_stored_per_sec", bStored);
      // The stored rates compared: rows in PostgreSQL (ours parsed, attributed, matched against 100 rules and queryable)
      // per second from the first message sent to the last row stored, at each side's best lossless step. The send rates
      // of the lossless steps would compare queues (ompgsql's action queue of 200000, our journal), not storing.
      print("events_syslog_ompgsql_ratio", oursUdpStored !== null && bStored ? (oursUdpStored / bStored).toFixed(2) : "n/a");
      print("events_syslog_ompgsql_lossless_ratio", oursUdp !== null && b ? (oursUdp / b).toFixed(2) : "n/a");
      print(
        "events_syslog_ompgsql_reps",
        `events_udp=${oursUdp ?? "not run (BENCH_CASES without udp)"} rsyslog_ompgsql=${ref.join(",")} ` +
          `stored_e2e_at_best_step: events_udp=${oursUdpStored ?? "n/a"} rsyslog_ompgsql=${stored.join(",")} load_at_rep_start=${loads.join(" ")}`,
      );
      continue;
    }
    const ours = [];
    const oursStored = [];
    const oursReceipt = [];
    const ref = [];
    const loads = [];
    for (let rep = 1; rep <= REPEATS; rep++) {
      loads.push(load());
      const r = await ladder(stepEvents, proto, rep);
      ours.push(r.best);
      oursStored.push(r.e2e);
      oursReceipt.push(r.receipt);
      phase(`${proto} rep ${rep}: events ${ours.at(-1)}/s`);
      ref.push((await ladder(stepRsyslog, proto, rep)).best);
      phase(`${proto} rep ${rep}: rsyslog ${ref.at(-1)}/s`);
    }
    const a = median(ours);
    const b = median(ref);
    print(`events_syslog_${proto}_lossless_per_sec`, a);
    print(`rsyslog_${proto}_lossless_per_sec`, b);
    print(`events_syslog_${proto}_ratio`, b ? (a / b).toFixed(2) : "n/a");
    print(`events_syslog_${proto}_reps`, `events=${ours.join(",")} rsyslog=${ref.join(",")} load_at_rep_start=${loads.join(" ")}`);
    if (proto === "udp") {
      // Receipt: the best step where the listeners read every datagram sent (each appended to the journal before
      // anything else), whether or not storing kept up within the step.
      const r = median(oursReceipt);
      print("events_syslog_udp_receipt_lossless_per_sec", r);
      print("events_syslog_udp_receipt_ratio", b ? (r / b).toFixed(2) : "n/a");
      print("events_syslog_udp_stored_per_sec", median(oursStored));
    } else {
      // Receipt over a stream: every message read and journaled, per second from the first sent to the last read, at
      // the best step (rsyslog's figure is its lines written to the file per second, first sent to last written).
      const r = median(oursReceipt);
      print(`events_syslog_${proto}_receipt_per_sec`, r);
      print(`events_syslog_${proto}_receipt_ratio`, b ? (r / b).toFixed(2) : "n/a");
    }
    if (proto === "udp") {
      oursUdp = a;
      oursUdpStored = median(oursStored);
      // bench/events-sustained.mjs runs at 80 % of this unless told otherwise.
      mkdirSync(CACHE, { recursive: true });
      writeFileSync(
        join(CACHE, "events-syslog-last.json"),
        // udp_stored_per_sec: bench/events-journal.mjs sends its burst at three times this.
        JSON.stringify({ udp_lossless_per_sec: a, udp_stored_per_sec: median(oursStored), at: new Date().toISOString(), load: load() }),
      );
    }
  }
  print("events_syslog_rsyslog_total_cpu_secs", procCpuSecs(rs.pid).toFixed(1));
  if (pgRef) print("events_syslog_ompgsql_rsyslog_total_cpu_secs", pgRef.cpuSecs().toFixed(1));
  print("events_syslog_load_after", load());
} finally {
  rmem.restore();
  phase("stopping");
  await rs?.stop().catch((e) => console.error(e));
  // Before the kernel: its PostgreSQL is the one ompgsql writes to.
  await pgRef?.stop().catch((e) => console.error(e));
  await ev?.stop().catch((e) => console.error(e));
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
