// SNMP trap ingest benchmark of the events plugin vs snmptrapd (`npm run bench:events-traps`; needs `npm run build` first).
//
// The service: the kernel in this process as in bench/events-syslog.mjs (events plugin with default pipeline settings,
// the trap listener on a free loopback port, community public, the node 127.0.0.1, the 100 event rules of
// bench/lib/events-peers.mjs, 3 of them trap_oid rules matching the trap). The reference: a private snmptrapd
// (`-f -C -c conf -Lf file -n -On -t`, authCommunity log public, one line per trap). The load for both: one genuine
// SNMPv2c linkDown trap (1.3.6.1.6.3.1.1.5.3 with ifIndex, ifAdminStatus, ifOperStatus and ifName var-binds) encoded
// by Net-SNMP's snmptrap and captured once, replayed at a paced rate from a child Node process over 4 sockets.
//
// Method: for each repetition the offered rate steps up (BENCH_TRAP_RATES, traps/s) with BENCH_STEP_SECS seconds of
// traps per step (at least 20000); the receiver is left to drain (count unchanged for 2 s). A step is lossless when
// every trap sent was stored (the service: GET /events/stats kind=trap since the step began; snmptrapd: lines
// logged); the ladder stops at the first step that loses. The figure of a repetition is the replayer's measured send
// rate at the highest lossless step; the printed figure is the median over BENCH_REPEATS repetitions (default 3).
// Sender and receivers share this machine's cores (2 here).
// Prints: events_traps_lossless_per_sec, snmptrapd_lossless_per_sec, events_traps_ratio, the per-repetition figures,
// and a `# step ...` line per step (CPU %, listener counters, UDP socket drops, queue drops, load).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  captureTrap,
  descendantsCpuSecs,
  listenerCounters,
  load,
  machine,
  median,
  print,
  replayUdp,
  settle,
  startEventsKernel,
  startProfile,
  startSnmptrapd,
  udpSocketDrops,
} from "./lib/events-peers.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const STEP_SECS = Number(process.env.BENCH_STEP_SECS ?? 5);
/** A directory: every step against the service is CPU-profiled (V8 inspector, this process) and summarised. */
const PROF_DIR = process.env.BENCH_CPU_PROF ?? null;
const RATES = (process.env.BENCH_TRAP_RATES ?? "1000,2500,5000,7500,10000,15000,20000,30000").split(",").map(Number);
const pct = (secs, wall) => Math.round((secs / wall) * 100);
const phaseStart = performance.now();
const phase = (name) => process.stderr.write(`[events-traps] ${name} at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s, load ${load()}\n`);

if (PROF_DIR) mkdirSync(PROF_DIR, { recursive: true });
print("events_traps_machine", machine());
print(
  "events_traps_method",
  `replayed snmptrap v2c linkDown datagram, ${STEP_SECS}s per step, ${REPEATS} repetitions (median), sender+receiver on the same cores`,
);

let ev = null;
let td = null;
try {
  ev = await startEventsKernel(ROOT);
  td = await startSnmptrapd();
  const pdu = await captureTrap("public");
  phase("kernel and snmptrapd ready");
  print("events_traps_pdu_bytes", pdu.length);
  const port = ev.ports["traps.udp"];
  let checked = false;

  const stepEvents = async (rate, rep) => {
    const count = Math.max(20000, Math.round(rate * STEP_SECS));
    const c0 = await listenerCounters(ev, "traps.udp");
    const s0 = ev.pipeline.stats();
    const drops0 = udpSocketDrops(port);
    const since = new Date(Date.now() - 50).toISOString();
    const cpu0 = process.cpuUsage();
    const pg0 = descendantsCpuSecs("postgres");
    const prof = PROF_DIR ? await startProfile() : null;
    const t0 = performance.now();
    const sent = await replayUdp({ payload: pdu, port, count, rate });
    const { count: stored, lastChangeMs } = await settle(() => ev.stored("trap", since));
    if (prof) {
      const p = await prof.stop(join(PROF_DIR, `events-traps-${rate}-rep${rep}.cpuprofile`));
      print("# profile", `target=${rate} rep=${rep} busy_pct=${p.busyPct}`);
      for (const l of p.self) print("# profile self", l);
      for (const l of p.inclusive) print("# profile inclusive", l);
    }
    const wall = (lastChangeMs - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg = descendantsCpuSecs("postgres") - pg0;
    const c1 = await listenerCounters(ev, "traps.udp");
    const s1 = ev.pipeline.stats();
    const lost = sent.sent - stored;
    print(
      "# step",
      `receiver=events rep=${rep} target=${rate} sent=${sent.sent} send_rate=${sent.rate} send_errors=${sent.errors} stored=${stored} lost=${lost} stored_per_sec=${Math.round(stored / wall)} ` +
        `node_cpu_pct=${pct((cpu.user + cpu.system) / 1e6, wall)} pg_cpu_pct=${pct(pg, wall)} sender_cpu_pct=${pct(sent.cpuSecs, sent.secs)} ` +
        `listener_received=${c1.received - c0.received} listener_dropped=${c1.dropped - c0.dropped} listener_malformed=${c1.malformed - c0.malformed} ` +
        `socket_drops=${udpSocketDrops(port) - drops0} queue_dropped=${s1.dropped_queue_full - s0.dropped_queue_full} load=${load()}`,
    );
    if (!checked) {
      checked = true;
      const body = await ev.api("GET", "/events?limit=1&kind=trap");
      const e = body.items?.[0] ?? body[0];
      print(
        "# sample",
        `node_id=${e?.node_id} (bench node ${ev.node.id}) trap_oid=${e?.trap_oid} action=${e?.action} rule_id=${e?.rule_id} malformed=${e?.malformed}`,
      );
    }
    return { ok: lost <= 0, sendRate: sent.rate };
  };

  const stepTrapd = async (rate, rep) => {
    const count = Math.max(20000, Math.round(rate * STEP_SECS));
    const before = (await settle(td.count, { quietMs: 1000 })).count;
    const drops0 = udpSocketDrops(td.port);
    const c0 = td.cpuSecs();
    const t0 = performance.now();
    const sent = await replayUdp({ payload: pdu, port: td.port, count, rate });
    const { count: after, lastChangeMs } = await settle(td.count);
    const wall = (lastChangeMs - t0) / 1000;
    const logged = after - before;
    const lost = sent.sent - logged;
    print(
      "# step",
      `receiver=snmptrapd rep=${rep} target=${rate} sent=${sent.sent} send_rate=${sent.rate} send_errors=${sent.errors} stored=${logged} lost=${lost} stored_per_sec=${Math.round(logged / wall)} ` +
        `snmptrapd_cpu_pct=${pct(td.cpuSecs() - c0, wall)} sender_cpu_pct=${pct(sent.cpuSecs, sent.secs)} socket_drops=${udpSocketDrops(td.port) - drops0} load=${load()}`,
    );
    return { ok: lost <= 0, sendRate: sent.rate };
  };

  const ladder = async (step, rep) => {
    let best = 0;
    for (const rate of RATES) {
      const r = await step(rate, rep);
      if (!r.ok) break;
      best = Math.max(best, r.sendRate);
    }
    return Math.round(best);
  };

  const ours = [];
  const ref = [];
  const loads = [];
  for (let rep = 1; rep <= REPEATS; rep++) {
    loads.push(load());
    ours.push(await ladder(stepEvents, rep));
    phase(`rep ${rep}: events ${ours.at(-1)}/s`);
    ref.push(await ladder(stepTrapd, rep));
    phase(`rep ${rep}: snmptrapd ${ref.at(-1)}/s`);
  }
  const a = median(ours);
  const b = median(ref);
  print("events_traps_lossless_per_sec", a);
  print("snmptrapd_lossless_per_sec", b);
  print("events_traps_ratio", b ? (a / b).toFixed(2) : "n/a");
  print("events_traps_reps", `events=${ours.join(",")} snmptrapd=${ref.join(",")} load_at_rep_start=${loads.join(" ")}`);
  print("events_traps_load_after", load());
} finally {
  phase("stopping");
  await td?.stop().catch((e) => console.error(e));
  await ev?.stop().catch((e) => console.error(e));
}
// Agenda leaves a lock timer (half the lock lifetime) that nothing cancels: do not wait for it.
process.exit(0);
