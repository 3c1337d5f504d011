/* global fetch */
// The three goals of the syslog ingest journal (docs/operations.md "The ingest journal", ADR 0015), measured
// (`npm run bench:events-journal`; needs `npm run build` first). BENCH_PARTS=burst,outage,kill9 (default all) picks them.
//
// burst and outage run against the kernel in this process as bench/events-syslog.mjs does (bench/lib/events-peers.mjs
// startEventsKernel: dist build, embedded PostgreSQL of its own in a fresh folder, inventory + polling + alerts +
// events, default pipeline and ingest settings, i.e. one ingest worker per core, node 127.0.0.1, 100 event rules),
// one kernel for both parts (outage runs after burst on the same tables). The sender is loggen (RFC 5424 200-byte
// messages over UDP). The journal backlog is sampled every second from ListenerService.journalStats(), the value the
// gauge nms_events_journal_backlog reports (read in-process: GET /metrics is not asked while PostgreSQL is frozen).
//
// 1. burst: "a burst of 60 s at 3x the sustained stored rate: 0 lost; report the time the journal takes to drain".
//    The sustained stored rate S: BENCH_STORED_RATE, else `udp_stored_per_sec` of the last bench/events-syslog.mjs run
//    (BENCH_CACHE_DIR, default /tmp/nms-bench/events-syslog-last.json), else measured here: 150,000 messages at 60,000
//    msg/s, S = stored / (first send -> last stored). Then loggen sends BENCH_BURST_SECS (60) at 3 x S over
//    BENCH_BURST_CONNS (8) UDP "connections" (source ports: the kernel spreads them over the ingest workers by
//    SO_REUSEPORT hash; the per-worker split is printed). Counted: loggen's sent, the listener's received (GET
//    /listeners), socket drops (/proc/net/udp), the journal's dropped, and stored (GET /events/stats since the start).
//    Drain: from loggen's exit until the backlog is 0 and the stored count has not grown for 2 s.
//    Prints events_journal_burst_offered_per_sec (loggen's measured rate), _sent, _stored, _lost (sent - stored),
//    _socket_drops, _peak_backlog, _drain_secs, _rss_mb_max (this process: the kernel and its workers).
// 2. outage: "PostgreSQL stopped for 60 s under 5k msg/s: 0 lost once it is back". loggen sends BENCH_OUTAGE_RATE
//    (5000) msg/s for 10 + BENCH_OUTAGE_SECS (60) + 20 s (loggen's pacing makes that about 4,600/s here, so the sending
//    lasts about 98 s); after 10 s every process of the embedded PostgreSQL (this
//    process's descendants named postgres) gets SIGSTOP, and SIGCONT BENCH_OUTAGE_SECS later. "Stopped" means frozen:
//    the connections stay open and nothing answers (a query waits, a new connection waits for its startup answer). A
//    kill would not do: the kernel's supervisor restarts an embedded server that exits within about a second, which is
//    not a 60 s outage. Drain: from SIGCONT until the backlog is back at its level before the outage (the largest
//    sample of the 10 s before: what is in flight at 5k msg/s) or, when sending ends first, at 0 with the stored count
//    still for 2 s. Prints events_journal_outage_sent, _stored, _lost, _peak_backlog, _drain_secs, _write_failures
//    (pipeline stats delta: batches tried and not stored), and the kernel's error log lines of the part.
// 3. kill9: "kill -9 of the service during TCP ingest at 5k msg/s: after restart every message that reached the journal
//    is stored exactly once; report how many the sender wrote that were not". The service runs as its own process
//    (`node dist/core/main.js`, built-in plugins, embedded PostgreSQL in a temporary data dir, syslog TCP only, on
//    127.0.0.1, the same node and 100 rules added through the API). 4 TCP connections write BENCH_KILL_RATE (5000)
//    msg/s together (a slice every 10 ms, paced by the clock), every message unique ("jk9-<run> <conn>-<seq>", about
//    200 bytes, newline-framed); a message counts as written when its write callback fires without error. After
//    BENCH_KILL_AFTER_SECS (20) the service gets SIGKILL and the writers stop at once. Before the restart the journal
//    files are read (the records of this run, torn tail excluded) to know what reached the journal. The service is
//    started again on the same data dir; drained = its GET /metrics backlog 0 and the stored count still for 2 s. Then
//    the stored rows of this run are counted in PostgreSQL (the embedded server, password from the data dir's
//    pg.credentials, port from the log line "embedded PostgreSQL started"). Prints events_journal_kill9_written,
//    _stored, _duplicates (total - distinct), _missing (written - distinct), _journaled_not_stored (in the journal
//    files at the kill, not stored after the restart: must be 0), _restart_to_drained_secs (spawn of the new process
//    until drained). The service's output of both runs is kept in BENCH_CACHE_DIR/events-journal-kill9-{first,second}.log.
// Every part also prints `# <part> cpu`: where the machine's CPU went over the part (this benchmark's processes, kernel
// threads, interrupts, other processes); others_pct well above 0 means the machine was shared and the figures are not clean.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { crc32 } from "node:zlib";
import pg from "pg";
import {
  CACHE,
  benchRules,
  descendants,
  descendantsRssMb,
  listenerCounters,
  load,
  machine,
  matchReceiveBuffers,
  print,
  runLoggen,
  sleep,
  startEventsKernel,
  udpSocketDrops,
} from "./lib/events-peers.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PARTS = (process.env.BENCH_PARTS ?? "burst,outage,kill9")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const BURST_SECS = Number(process.env.BENCH_BURST_SECS ?? 60);
// Eight source ports: SO_REUSEPORT hashes each to one worker, and with four all landed on one of two workers in one run
// of four here (half the receiving capacity); with eight that is unlikely (1 in 128 with two workers).
const BURST_CONNS = Number(process.env.BENCH_BURST_CONNS ?? 8);
const OUTAGE_RATE = Number(process.env.BENCH_OUTAGE_RATE ?? 5000);
const OUTAGE_SECS = Number(process.env.BENCH_OUTAGE_SECS ?? 60);
const OUTAGE_BEFORE_SECS = 10;
const OUTAGE_AFTER_SECS = 20;
const KILL_RATE = Number(process.env.BENCH_KILL_RATE ?? 5000);
const KILL_AFTER_SECS = Number(process.env.BENCH_KILL_AFTER_SECS ?? 20);
const KILL_CONNS = 4;
/** The longest a drain is waited for. */
const DRAIN_MAX_MS = Number(process.env.BENCH_DRAIN_MAX_SECS ?? 900) * 1000;
const MAIN = join(ROOT, "dist/core/main.js");
const mb = (b) => Math.round(b / 1048576);
const secs = (ms) => (ms / 1000).toFixed(1);
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[events-journal] ${name} at ${secs(performance.now() - phaseStart)} s, load ${load()}\n`);

for (const p of PARTS) if (!["burst", "outage", "kill9"].includes(p)) throw new Error(`BENCH_PARTS: unknown part ${p} (burst, outage, kill9)`);
print("events_journal_machine", machine());
print("events_journal_parts", PARTS.join(","));

/**
 * Every process's CPU seconds so far (user + system + its reaped children's, USER_HZ 100), its name, and whether it is
 * this benchmark's (this process or a descendant) or a kernel thread (a child of kthreadd, pid 2).
 */
function processCpu() {
  const procs = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, "utf8");
      const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
      const cpu = (Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14])) / 100;
      procs.set(Number(d), { comm: f.slice(f.indexOf("(") + 1, f.lastIndexOf(")")), ppid: Number(rest[1]), cpu });
    } catch {
      // gone
    }
  }
  for (const [pid, p] of procs) {
    p.kernelThread = pid === 2 || p.ppid === 2;
    p.ours = false;
    for (let q = pid, hops = 0; q && hops < 64; q = procs.get(q)?.ppid, hops++)
      if (q === process.pid) {
        p.ours = true;
        break;
      }
  }
  return procs;
}

/** The machine's CPU seconds so far by /proc/stat column: busy in processes (user, nice, system) and in interrupts (irq, softirq). */
function machineCpu() {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return { procs: (f[0] + f[1] + f[2]) / 100, irq: (f[5] + f[6]) / 100 };
}

/**
 * How the machine's CPU went over a part: this benchmark's processes (this process and its descendants: the kernel,
 * its PostgreSQL, loggen, the spawned service; a child's time counts once it is reaped), kernel threads, interrupts
 * (the loopback network's softirq work is there), and other processes (`others_pct` well above 0: the machine was
 * shared, the figures are not clean; the top ones are named). Percentages of one core.
 */
function cpuMeter() {
  const t0 = performance.now();
  const m0 = machineCpu();
  const p0 = processCpu();
  return () => {
    const wall = (performance.now() - t0) / 1000;
    const m1 = machineCpu();
    const sums = { ours: 0, kthreads: 0, others: 0 };
    const foreign = new Map();
    const p1 = processCpu();
    const kindOf = (p) => (p.ours ? "ours" : p.kernelThread ? "kthreads" : "others");
    for (const [pid, p] of p1) {
      const before = p0.get(pid);
      const d = p.cpu - (before && before.comm === p.comm ? before.cpu : 0);
      if (d <= 0) continue;
      sums[kindOf(p)] += d;
      if (kindOf(p) === "others") foreign.set(`${p.comm}[${pid}]`, d);
    }
    // A process that ended in between: its whole time went into its parent's (reaped children), counted above; what it
    // had used before the part is not the part's.
    for (const [pid, p] of p0) if (p1.get(pid)?.comm !== p.comm) sums[kindOf(p)] -= p.cpu;
    for (const k of Object.keys(sums)) sums[k] = Math.max(0, sums[k]);
    const pct = (x) => Math.round((x / wall) * 100);
    const top = [...foreign]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, v]) => `${k}:${pct(v)}`)
      .join(",");
    return (
      `machine_procs_pct=${pct(m1.procs - m0.procs)} irq_softirq_pct=${pct(m1.irq - m0.irq)} ours_pct=${pct(sums.ours)} ` +
      `kernel_threads_pct=${pct(sums.kthreads)} others_pct=${pct(sums.others)}${top ? ` (${top})` : ""} of ${cpus().length * 100} over ${wall.toFixed(0)} s`
    );
  };
}

/**
 * Waits until `backlog()` is 0 and `count()` has not changed for `quietMs` (both polled every `everyMs`). Resolves with
 * the last count and `at`: when the later of the two happened (the backlog reached 0 for good, the count last changed).
 */
async function drained(backlog, count, { quietMs = 2000, everyMs = 250, maxMs = DRAIN_MAX_MS } = {}) {
  const t0 = performance.now();
  let last = await count();
  let changed = performance.now();
  let zeroAt = null;
  for (;;) {
    const b = await backlog();
    const now = performance.now();
    if (b === 0) zeroAt ??= now;
    else zeroAt = null;
    const n = await count();
    if (n !== last) {
      last = n;
      changed = performance.now();
    }
    const quiet = performance.now() - changed >= quietMs;
    if (zeroAt !== null && quiet && performance.now() - zeroAt >= quietMs) return { count: last, at: Math.max(zeroAt, changed), timedOut: false };
    if (now - t0 > maxMs) return { count: last, at: now, timedOut: true, backlog: b };
    await sleep(everyMs);
  }
}

/** Samples `fn()` every `everyMs` until stop(); keeps every sample. */
function sampler(fn, everyMs = 1000) {
  const samples = [];
  let running = true;
  const loop = (async () => {
    let next = performance.now();
    while (running) {
      samples.push({ t: performance.now(), ...(await fn()) });
      next += everyMs;
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

// ---- the in-process kernel: burst and outage ---------------------------------------------------------------------

/** The kernel's error log lines written since `from` (index in k.logs), counted by message, a few printed. */
function printErrors(ev, from, part) {
  const lines = ev.k.logs.slice(from);
  const byMsg = new Map();
  for (const l of lines) {
    let rec;
    try {
      rec = JSON.parse(l);
    } catch {
      rec = { msg: l.slice(0, 200) };
    }
    const e = byMsg.get(rec.msg) ?? { n: 0, first: rec };
    e.n++;
    byMsg.set(rec.msg, e);
  }
  print(`# ${part} kernel_error_lines`, lines.length);
  for (const [msg, e] of byMsg)
    print(`# ${part} kernel_error`, `n=${e.n} msg=${JSON.stringify(msg)} first=${JSON.stringify({ ...e.first, msg: undefined }).slice(0, 600)}`);
}

async function burstPart(ev, ListenerService) {
  const port = ev.ports["syslog.udp"];
  const listeners = ev.k.context("events").get(ListenerService);
  const journal = () => listeners.journalStats() ?? { journals: 0, bytes: 0, backlog: NaN, dropped: 0, lost: 0 };
  const written = () => ev.pipeline.stats().written;

  // The sustained stored rate S.
  let stored = Number(process.env.BENCH_STORED_RATE ?? 0);
  let from = "BENCH_STORED_RATE";
  if (!stored) {
    try {
      const last = JSON.parse(readFileSync(join(CACHE, "events-syslog-last.json"), "utf8"));
      if (last.udp_stored_per_sec > 0) {
        stored = Math.round(last.udp_stored_per_sec);
        from = `events_syslog_udp_stored_per_sec of ${join(CACHE, "events-syslog-last.json")} (${last.at}, load then ${last.load})`;
      }
    } catch {
      // none recorded
    }
  }
  if (!stored) {
    const count = 150000;
    const since = new Date(Date.now() - 50).toISOString();
    const drops0 = udpSocketDrops(port);
    const perWorker0 = listeners.ingest?.receivedPerWorker("syslog.udp") ?? [];
    const t0 = performance.now();
    const s = await runLoggen({
      proto: "udp",
      port,
      perConn: Math.ceil(count / BURST_CONNS),
      ratePerConn: Math.round(60000 / BURST_CONNS),
      conns: BURST_CONNS,
    });
    const d = await drained(() => journal().backlog, written);
    const n = await ev.stored("syslog", since);
    stored = Math.round(n / ((d.at - t0) / 1000));
    from = `measured here: ${s.sent} sent at ${Math.round(s.rate)}/s over ${BURST_CONNS} UDP conns, ${n} stored in ${secs(d.at - t0)} s (first send to last stored), socket_drops=${udpSocketDrops(port) - drops0} per_worker=${(listeners.ingest?.receivedPerWorker("syslog.udp") ?? []).map((x, i) => x - (perWorker0[i] ?? 0)).join("/")}`;
  }
  print("events_journal_stored_rate_from", from);
  print("events_journal_stored_rate_per_sec", stored);

  const rate = 3 * stored;
  const conns = Math.max(BURST_CONNS, Math.ceil(rate / 40000));
  const perConn = Math.round((rate / conns) * BURST_SECS);
  print("# burst", `target=${rate}/s for ${BURST_SECS} s over ${conns} UDP conns (${Math.round(rate / conns)}/s each), ${perConn * conns} messages`);

  await drained(() => journal().backlog, written, { quietMs: 1000 });
  const since = new Date(Date.now() - 50).toISOString();
  const c0 = await listenerCounters(ev, "syslog.udp");
  const s0 = ev.pipeline.stats();
  const j0 = journal();
  const drops0 = udpSocketDrops(port);
  const perWorker0 = listeners.ingest?.receivedPerWorker("syslog.udp") ?? [];
  const rssIdle = process.memoryUsage().rss;
  const logs0 = ev.k.logs.length;
  const t0 = performance.now();
  const smp = sampler(() => {
    const j = journal();
    return { backlog: j.backlog, bytes: j.bytes, rss: process.memoryUsage().rss, written: written() - s0.written, drops: udpSocketDrops(port) - drops0 };
  });
  const sent = await runLoggen({ proto: "udp", port, perConn, ratePerConn: Math.round(rate / conns), conns, maxSecs: BURST_SECS + 10 });
  const tSent = performance.now();
  phase(`burst sent ${sent.sent} at ${Math.round(sent.rate)}/s; draining`);
  const d = await drained(() => journal().backlog, written);
  const samples = await smp.stop();
  const storedN = await ev.stored("syslog", since);
  const c1 = await listenerCounters(ev, "syslog.udp");
  const s1 = ev.pipeline.stats();
  const j1 = journal();
  const perWorker = (listeners.ingest?.receivedPerWorker("syslog.udp") ?? []).map((n, i) => n - (perWorker0[i] ?? 0));
  for (const s of samples.filter((_, i) => i % 10 === 0))
    print(
      "# burst sample",
      `t=${secs(s.t - t0)} backlog=${s.backlog} journal_mb=${mb(s.bytes)} rss_mb=${mb(s.rss)} written=${s.written} socket_drops=${s.drops}`,
    );
  print("events_journal_burst_offered_per_sec", Math.round(sent.rate));
  print("events_journal_burst_sent", sent.sent);
  print("events_journal_burst_stored", storedN);
  print("events_journal_burst_lost", sent.sent - storedN);
  print("events_journal_burst_socket_drops", udpSocketDrops(port) - drops0);
  print("events_journal_burst_peak_backlog", Math.max(0, ...samples.map((s) => s.backlog).filter(Number.isFinite)));
  print("events_journal_burst_drain_secs", d.timedOut ? `not drained after ${secs(DRAIN_MAX_MS)} s (backlog ${d.backlog})` : secs(d.at - tSent));
  print("events_journal_burst_rss_mb_max", Math.max(mb(rssIdle), ...samples.map((s) => mb(s.rss))));
  print(
    "# burst detail",
    `send_secs=${sent.loggenSecs} received=${c1.received - c0.received} per_worker=${perWorker.join("/")} listener_dropped=${c1.dropped - c0.dropped} ` +
      `malformed=${c1.malformed - c0.malformed} journal_dropped=${j1.dropped - j0.dropped} journal_lost=${j1.lost - j0.lost} ` +
      `written_delta=${s1.written - s0.written} write_failures=${s1.write_failures - s0.write_failures} dead_lettered=${s1.dead_lettered - s0.dead_lettered} ` +
      `stored_per_sec_during_drain=${Math.round((s1.written - s0.written) / ((d.at - t0) / 1000))} rss_mb_idle=${mb(rssIdle)} pg_rss_mb=${descendantsRssMb("postgres")} ` +
      `loggen_errors=${sent.errors} load=${load()}`,
  );
  printErrors(ev, logs0, "burst");
}

/** SIGSTOP every process of the embedded PostgreSQL (this process's descendants named postgres); returns their pids. */
function freezePostgres() {
  const stopped = new Set();
  // Twice more after the first round: a backend forked while the postmaster was being stopped is caught too.
  for (let round = 0; round < 3; round++)
    for (const pid of descendants("postgres")) {
      if (stopped.has(pid)) continue;
      try {
        process.kill(pid, "SIGSTOP");
        stopped.add(pid);
      } catch {
        // gone
      }
    }
  return [...stopped];
}

function thawPostgres(pids) {
  for (const pid of pids)
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
}

let frozen = [];

async function outagePart(ev, ListenerService) {
  const port = ev.ports["syslog.udp"];
  const listeners = ev.k.context("events").get(ListenerService);
  const journal = () => listeners.journalStats() ?? { journals: 0, bytes: 0, backlog: NaN, dropped: 0, lost: 0 };
  const written = () => ev.pipeline.stats().written;
  await drained(() => journal().backlog, written, { quietMs: 1000 });
  const total = OUTAGE_BEFORE_SECS + OUTAGE_SECS + OUTAGE_AFTER_SECS;
  const since = new Date(Date.now() - 50).toISOString();
  const c0 = await listenerCounters(ev, "syslog.udp");
  const s0 = ev.pipeline.stats();
  const j0 = journal();
  const drops0 = udpSocketDrops(port);
  const logs0 = ev.k.logs.length;
  const t0 = performance.now();
  const smp = sampler(() => {
    const j = journal();
    const s = ev.pipeline.stats();
    return { backlog: j.backlog, bytes: j.bytes, written: s.written - s0.written, failures: s.write_failures - s0.write_failures };
  });
  const sending = runLoggen({ proto: "udp", port, perConn: OUTAGE_RATE * total, ratePerConn: OUTAGE_RATE, maxSecs: total + 30 });
  let sendDone = null;
  void sending.finally(() => (sendDone = performance.now()));
  await sleep(OUTAGE_BEFORE_SECS * 1000);
  const before = smp.samples.filter((s) => s.t >= t0 + 2000).map((s) => s.backlog);
  const steady = Math.max(0, ...before.filter(Number.isFinite));
  frozen = freezePostgres();
  const tStop = performance.now();
  phase(`PostgreSQL frozen (${frozen.length} processes)`);
  print(
    "# outage",
    `SIGSTOP to ${frozen.length} postgres processes (${frozen.join(",")}) at t=${secs(tStop - t0)} s; backlog before the outage at most ${steady}`,
  );
  await sleep(OUTAGE_SECS * 1000);
  thawPostgres(frozen);
  frozen = [];
  const tCont = performance.now();
  phase("PostgreSQL thawed");
  // Caught up: the backlog back at its steady level while loggen sends, or at 0 (count still) once it has stopped.
  let caughtUp = null;
  const backlogAtCont = journal().backlog;
  for (;;) {
    const b = journal().backlog;
    if (sendDone === null && b <= steady && performance.now() - tCont > 500) {
      caughtUp = performance.now();
      break;
    }
    if (sendDone !== null) break;
    await sleep(250);
  }
  const sent = await sending;
  const d = await drained(() => journal().backlog, written);
  if (caughtUp === null) caughtUp = d.at;
  const samples = await smp.stop();
  const storedN = await ev.stored("syslog", since);
  const c1 = await listenerCounters(ev, "syslog.udp");
  const s1 = ev.pipeline.stats();
  const j1 = journal();
  for (const s of samples.filter((_, i) => i % 10 === 0))
    print("# outage sample", `t=${secs(s.t - t0)} backlog=${s.backlog} journal_mb=${mb(s.bytes)} written=${s.written} write_failures=${s.failures}`);
  print("events_journal_outage_sent", sent.sent);
  print("events_journal_outage_stored", storedN);
  print("events_journal_outage_lost", sent.sent - storedN);
  print("events_journal_outage_peak_backlog", Math.max(0, ...samples.map((s) => s.backlog).filter(Number.isFinite)));
  print("events_journal_outage_drain_secs", secs(caughtUp - tCont));
  print("events_journal_outage_write_failures", s1.write_failures - s0.write_failures);
  print(
    "# outage detail",
    `offered_per_sec=${Math.round(sent.rate)} send_secs=${sent.loggenSecs} received=${c1.received - c0.received} socket_drops=${udpSocketDrops(port) - drops0} ` +
      `listener_dropped=${c1.dropped - c0.dropped} journal_dropped=${j1.dropped - j0.dropped} journal_lost=${j1.lost - j0.lost} written_delta=${s1.written - s0.written} ` +
      `dead_lettered=${s1.dead_lettered - s0.dead_lettered} backlog_at_sigcont=${backlogAtCont} drain_to_steady=${caughtUp === d.at ? "after sending ended" : `backlog<=${steady}`} ` +
      `sigcont_to_zero_and_still_secs=${secs(d.at - tCont)} (sending ended ${sendDone ? secs(sendDone - tCont) : "?"} s after SIGCONT) load=${load()}`,
  );
  printErrors(ev, logs0, "outage");
}

// ---- the service as its own process: kill -9 ---------------------------------------------------------------------

/** Starts `node dist/core/main.js` with `env`; its output goes to `logFile`; resolves at the ready line. */
function spawnService(env, logFile) {
  const child = spawn(process.execPath, [`--openssl-config=${join(ROOT, "config/openssl.cnf")}`, MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_PORT: "0", NMS_HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const file = createWriteStream(logFile);
  let out = "";
  child.stdout.on("data", (c) => ((out += c), file.write(c)));
  child.stderr.on("data", (c) => ((out += c), file.write(c)));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => (file.end(), resolve(code ?? signal))));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 180 s; see ${logFile}`)), 180000);
    void exited.then((code) => (clearTimeout(timer), reject(new Error(`the service exited (${code}) before ready; see ${logFile}\n${out.slice(-2000)}`))));
    child.stdout.on("data", () => {
      const m = /ready at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return { child, exited, ready, output: () => out };
}

/** The log records (JSON lines) of a service's output whose msg contains `text`. */
const logRecords = (out, text) =>
  out
    .split("\n")
    .filter((l) => l.includes(text))
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return { msg: l };
      }
    });

/** GET /metrics of a spawned service: {backlog, bytes} (null when it does not answer). */
async function journalMetrics(url) {
  const res = await fetch(`${url}/metrics`).catch(() => null);
  if (!res?.ok) return null;
  const text = await res.text();
  const value = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return { backlog: value("nms_events_journal_backlog"), bytes: value("nms_events_journal_bytes"), written: value("nms_events_written_total") };
}

/**
 * The ids ("<conn>-<seq>") of this run's messages in the journal files of `dataDir` (every segment of every
 * syslog-<n> folder; a record whose CRC fails ends its segment, as the journal cuts a torn tail on open).
 */
function journaledIds(dataDir, marker) {
  const ids = new Set();
  const root = join(dataDir, "journal");
  const info = { records: 0, torn: 0, segments: 0, checkpoints: [] };
  if (!existsSync(root)) return { ids, ...info };
  const needle = Buffer.from(`${marker} `);
  for (const d of readdirSync(root).filter((f) => /^syslog-\d+$/.test(f))) {
    const dir = join(root, d);
    const cp = join(dir, "checkpoint");
    info.checkpoints.push(`${d}:${existsSync(cp) ? readFileSync(cp, "utf8").trim() : "none"}`);
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".log"))) {
      info.segments++;
      const buf = readFileSync(join(dir, f));
      let at = 0;
      while (at + 16 <= buf.length) {
        const len = buf.readUInt32BE(at);
        if (at + 16 + len > buf.length || crc32(buf.subarray(at + 8, at + 16 + len)) !== buf.readUInt32BE(at + 4)) {
          info.torn++;
          break;
        }
        info.records++;
        const payload = buf.subarray(at + 16, at + 16 + len);
        const i = payload.indexOf(needle);
        if (i >= 0) {
          const rest = payload.subarray(i + needle.length);
          const sp = rest.indexOf(0x20);
          ids.add(rest.subarray(0, sp < 0 ? rest.length : sp).toString("latin1"));
        }
        at += 16 + len;
      }
    }
  }
  return { ids, ...info };
}

/** The embedded PostgreSQL's URL from a service's output and its data dir's pg.credentials. */
function embeddedUrl(out, dataDir) {
  const started = logRecords(out, "embedded PostgreSQL started").at(-1);
  if (!started?.port) throw new Error("no `embedded PostgreSQL started` line in the service's output");
  const password = readFileSync(join(dataDir, "pg.credentials"), "utf8").trim();
  return `postgresql://nms:${encodeURIComponent(password)}@127.0.0.1:${started.port}/postgres`;
}

/** A PostgreSQL left running from `dataDir`'s cluster (postmaster.pid naming a live postgres): stopped (fast shutdown). */
async function stopLeftoverPostgres(dataDir) {
  try {
    const pidFile = join(realpathSync(join(dataDir, "pg")), "postmaster.pid");
    if (!existsSync(pidFile)) return;
    const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    if (!pid || readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") return;
    process.kill(pid, "SIGINT");
    for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await sleep(100);
  } catch {
    // nothing left
  }
}

/** Removes a data dir, and the cluster folder its `pg` links to when the server user could not enter it. */
function removeDataDir(dataDir) {
  try {
    const pgDir = join(dataDir, "pg");
    if (lstatSync(pgDir).isSymbolicLink()) rmSync(realpathSync(pgDir), { recursive: true, force: true });
  } catch {
    // no cluster
  }
  rmSync(dataDir, { recursive: true, force: true });
}

/** Four (KILL_CONNS) paced TCP writers of unique messages; written counts per connection (write callback, no error). */
function startWriters(port, marker, rate) {
  const perConn = rate / KILL_CONNS;
  const pad = "x".repeat(120);
  const state = { stop: false, written: Array(KILL_CONNS).fill(0), attempted: Array(KILL_CONNS).fill(0), errors: 0 };
  const t0 = performance.now();
  const socks = [];
  const done = Array.from({ length: KILL_CONNS }, (_, c) => {
    const sock = connect(port, "127.0.0.1");
    socks.push(sock);
    sock.setNoDelay(true);
    sock.on("error", () => undefined);
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        if (state.stop || sock.destroyed) return;
        const due = Math.floor(((performance.now() - t0) / 1000) * perConn);
        const n = due - state.attempted[c];
        if (n <= 0) return;
        const ts = new Date().toISOString();
        let slice = "";
        for (let k = 0; k < n; k++) slice += `<14>1 ${ts} bench-host jk9 - - - ${marker} ${c}-${state.attempted[c] + k} ${pad}\n`;
        state.attempted[c] += n;
        sock.write(slice, (err) => {
          if (err) state.errors++;
          else state.written[c] += n;
        });
      }, 10);
      sock.once("close", () => {
        clearInterval(timer);
        resolve();
      });
    });
  });
  return {
    state,
    stop() {
      state.stop = true;
    },
    /** Resolves once every connection closed (the service gone, or destroy()). */
    async closed() {
      await Promise.all(done);
    },
    destroy() {
      state.stop = true;
      for (const s of socks) s.destroy();
    },
  };
}

async function kill9Part() {
  const dataDir = mkdtempSync(join(tmpdir(), "nms-bench-journal-kill9-"));
  mkdirSync(CACHE, { recursive: true });
  const logs = { first: join(CACHE, "events-journal-kill9-first.log"), second: join(CACHE, "events-journal-kill9-second.log") };
  const token = `bench-journal-kill9-${randomBytes(12).toString("hex")}`;
  const marker = `jk9-${randomBytes(4).toString("hex")}`;
  const env = {
    NMS_DATA_DIR: dataDir,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_BUILTIN_PLUGINS: "true",
    NMS__pluginConfig__polling__embeddedPoller: "false",
    NMS__pluginConfig__events__syslog__udp: "null",
    NMS__pluginConfig__events__syslog__tcp: "0",
    NMS__pluginConfig__events__syslog__tls: "null",
    NMS__pluginConfig__events__syslog__bindAddress: "127.0.0.1",
    NMS__pluginConfig__events__traps__udp: "null",
    NMS__pluginConfig__flows__udp: "null",
  };
  const auth = { authorization: `Bearer ${token}` };
  const api = async (url, method, path, body) => {
    const res = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { ...auth, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  let first = null;
  let second = null;
  let writers = null;
  let db = null;
  try {
    first = spawnService(env, logs.first);
    const url1 = await first.ready;
    phase("kill9: service ready");
    await api(url1, "POST", "/nodes", { name: "bench-loopback", address: "127.0.0.1" });
    for (const r of benchRules()) await api(url1, "POST", "/event-rules", r);
    const port = (await api(url1, "GET", "/listeners")).listeners.find((l) => l.name === "syslog.tcp").port;
    writers = startWriters(port, marker, KILL_RATE);
    const t0 = performance.now();
    const smp = sampler(async () => (await journalMetrics(url1)) ?? {});
    await sleep(KILL_AFTER_SECS * 1000);
    const atKill = (await smp.stop()).at(-1) ?? {};
    first.child.kill("SIGKILL");
    writers.stop();
    const tKill = performance.now();
    await first.exited;
    await Promise.race([writers.closed(), sleep(5000)]);
    writers.destroy();
    const { written, attempted, errors } = writers.state;
    const writtenTotal = written.reduce((a, b) => a + b, 0);
    const attemptedTotal = attempted.reduce((a, b) => a + b, 0);
    phase(`kill9: SIGKILL after ${secs(tKill - t0)} s; ${writtenTotal} written`);
    print(
      "# kill9 at_kill",
      `after_secs=${secs(tKill - t0)} written=${writtenTotal} (${written.join("/")}) attempted=${attemptedTotal} write_errors=${errors} ` +
        `backlog_last_sample=${atKill.backlog} written_total_last_sample=${atKill.written} journal_mb=${mb(atKill.bytes ?? 0)}`,
    );
    const j = journaledIds(dataDir, marker);
    print(
      "# kill9 journal",
      `records=${j.records} of_this_run=${j.ids.size} segments=${j.segments} torn_tails=${j.torn} checkpoints=${j.checkpoints.join(" ")}`,
    );
    const orphans = (() => {
      try {
        const pid = Number(readFileSync(join(realpathSync(join(dataDir, "pg")), "postmaster.pid"), "utf8").split("\n")[0]);
        return existsSync(`/proc/${pid}`) ? `postmaster ${pid} still running` : "postmaster.pid left, server gone";
      } catch {
        return "no postmaster.pid";
      }
    })();
    print("# kill9 embedded_pg_after_kill", orphans);

    const tSpawn = performance.now();
    second = spawnService(env, logs.second);
    const url2 = await second.ready;
    const tReady = performance.now();
    phase("kill9: restarted");
    db = new pg.Client({ connectionString: embeddedUrl(second.output(), dataDir) });
    await db.connect();
    const like = `${marker} %`;
    const countRows = async () => Number((await db.query("SELECT count(*) AS n FROM events.events WHERE message LIKE $1", [like])).rows[0].n);
    const backlog = async () => {
      const m = await journalMetrics(url2);
      // Until the workers' first stats the gauges read 0: a journal that holds nothing has no bytes either.
      return m && Number.isFinite(m.backlog) && m.bytes > 0 ? m.backlog : null;
    };
    const d = await drained(backlog, countRows);
    const rows = (await db.query("SELECT split_part(message, ' ', 2) AS id, count(*)::int AS n FROM events.events WHERE message LIKE $1 GROUP BY 1", [like]))
      .rows;
    let total = 0;
    let writtenStored = 0;
    let storedUnwritten = 0;
    const stored = new Set();
    for (const r of rows) {
      total += r.n;
      stored.add(r.id);
      const [c, i] = r.id.split("-").map(Number);
      if (i < written[c]) writtenStored++;
      else storedUnwritten++;
    }
    let journaledNotStored = 0;
    for (const id of j.ids) if (!stored.has(id)) journaledNotStored++;
    const missingPerConn = written.map((w, c) => {
      let n = 0;
      for (let i = 0; i < w; i++) if (!stored.has(`${c}-${i}`)) n++;
      return n;
    });
    print("events_journal_kill9_written", writtenTotal);
    print("events_journal_kill9_stored", total);
    print("events_journal_kill9_duplicates", total - stored.size);
    print("events_journal_kill9_missing", writtenTotal - stored.size);
    print("events_journal_kill9_journaled_not_stored", journaledNotStored);
    print(
      "events_journal_kill9_restart_to_drained_secs",
      d.timedOut ? `not drained after ${secs(DRAIN_MAX_MS)} s (backlog ${d.backlog})` : secs(d.at - tSpawn),
    );
    const replayed = logRecords(second.output(), "replayed from its last commit").map((r) => `${r.journal?.slice(0, 8)}:${r.records}`);
    print(
      "# kill9 detail",
      `distinct=${stored.size} journaled=${j.ids.size} written_and_stored=${writtenStored} stored_not_acknowledged_to_sender=${storedUnwritten} ` +
        `missing_per_conn=${missingPerConn.join("/")} spawn_to_ready_secs=${secs(tReady - tSpawn)} replayed=${replayed.join(",") || "none logged"} load=${load()}`,
    );
    for (const which of ["first", "second"]) {
      const out = (which === "first" ? first : second).output();
      const bad = logRecords(out, '"level":"error"').concat(logRecords(out, '"level":"warn"'));
      print(`# kill9 ${which} warn_error_lines`, `${bad.length} (log: ${logs[which]})`);
      for (const r of bad.slice(0, 8)) print(`# kill9 ${which} log`, JSON.stringify(r).slice(0, 400));
    }
  } finally {
    writers?.destroy();
    await db?.end().catch(() => undefined);
    if (second && second.child.exitCode === null && second.child.signalCode === null) {
      second.child.kill("SIGTERM");
      const code = await Promise.race([second.exited, sleep(30000).then(() => "timeout")]);
      if (code !== 0) print("# kill9 second_stop", `exit ${code}`);
      if (code === "timeout") second.child.kill("SIGKILL");
    }
    if (first && first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL");
    await stopLeftoverPostgres(dataDir);
    removeDataDir(dataDir);
  }
}

// ---- main --------------------------------------------------------------------------------------------------------

let ev = null;
const rmem = matchReceiveBuffers();
print("events_journal_rmem_max", rmem.rmemMax);
try {
  if (PARTS.includes("burst") || PARTS.includes("outage")) {
    ev = await startEventsKernel(ROOT);
    const { ListenerService } = await import(new URL(`file://${join(ROOT, "dist/plugins/events/services/ListenerService.js")}`).href);
    phase("kernel ready");
    print("# kernel", `in-process, ports udp=${ev.ports["syslog.udp"]} tcp=${ev.ports["syslog.tcp"]}, load ${load()}`);
    if (PARTS.includes("burst")) {
      const cpu = cpuMeter();
      await burstPart(ev, ListenerService);
      print("# burst cpu", cpu());
      phase("burst done");
    }
    if (PARTS.includes("outage")) {
      const cpu = cpuMeter();
      await outagePart(ev, ListenerService);
      print("# outage cpu", cpu());
      phase("outage done");
    }
    await ev.stop();
    ev = null;
  }
  if (PARTS.includes("kill9")) {
    const cpu = cpuMeter();
    await kill9Part();
    print("# kill9 cpu", cpu());
    phase("kill9 done");
  }
  print("events_journal_load_after", load());
} finally {
  thawPostgres(frozen);
  rmem.restore();
  await ev?.stop().catch((e) => console.error(e));
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
