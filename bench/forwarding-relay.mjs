// Syslog UDP relay benchmark of the forwarding plugin vs rsyslog's omfwd (`npm run bench:forwarding-relay`; builds first).
//
// The far end for both: a private rsyslogd collector (bench/lib/events-peers.mjs startRsyslog: imudp, RECEIVE_BUFFER_BYTES of buffer,
// one line per message). Ours: the built kernel in this process with the events plugin (its usual storage and 100
// rules) and the forwarding plugin, one syslog_udp destination (verbatim) to the collector. The reference: a second
// private rsyslogd as a relay (imudp in, omfwd UDP out to the collector, the same machine). The sender: loggen, RFC
// 5424 200-byte messages over UDP.
//
// 1. Highest lossless rate: the offered rate steps up (BENCH_RATES) with BENCH_STEP_SECS seconds per step; a step is
//    lossless when the collector wrote every message loggen reports sent. The figure is loggen's send rate at the best
//    lossless step, the median over BENCH_REPEATS repetitions.
// 2. Added latency (receive → forwarded): this process sends BENCH_LAT_COUNT messages at BENCH_LAT_RATE msg/s, each
//    carrying its send time, to the relay, whose destination is a UDP socket in this process; latency = arrival − send
//    (one clock). p50/p99 for ours (the first of BENCH_CONFIGS) and for the rsyslog relay.
// With the forwarding plugin's UDP fast path (the default), the relay goes out from the UDP listener's reader thread;
// each ours-step also prints what the events pipeline itself dropped at that rate (pipeline_dropped), which the relay
// does not wait for. BENCH_FAST_PATH=false measures the tee path instead.
// BENCH_SENDER=paced replaces loggen by a paced sender (a child Node process sending one 200-byte RFC 5424 message
// every 1/rate s, in ~1 ms ticks, from 4 sockets): loggen starts every run with a burst of most of a second's messages
// at once, which decides the lossless rate of a receiver that cannot drain a full socket buffer at loggen's speed; the
// paced sender measures the sustained rate instead.
// loggen sends from BENCH_UDP_CONNS sockets (default 4; 1 before 2026-11-29): the kernel spreads senders over the
// service's ingest workers (SO_REUSEPORT), each relaying what it receives, as over rsyslog's imudp threads.
// BENCH_CONFIGS (default "listener,port") says which of ours run: `listener`, the syslog UDP listener of the events
// plugin (the deployed path: every relayed message is also journaled, parsed, matched and stored); `port`, the
// forwarding plugin's relay port (config `relay`), which only relays, as rsyslog's relay does.
// Prints forwarding_udp_lossless_per_sec, rsyslog_relay_udp_lossless_per_sec, forwarding_udp_ratio (the listener),
// forwarding_relay_port_udp_lossless_per_sec and forwarding_relay_port_udp_ratio (the relay port),
// forwarding_latency_ms_p50/p99, rsyslog_relay_latency_ms_p50/p99, and `# step` lines.
import { createSocket } from "node:dgram";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  load,
  machine,
  median,
  print,
  replayUdp,
  runLoggen,
  settle,
  sleep,
  startEventsKernel,
  startRelay,
  startRsyslog,
  udpSocketDrops,
  matchReceiveBuffers,
} from "./lib/events-peers.mjs";

const UDP_CONNS = Number(process.env.BENCH_UDP_CONNS ?? 4);
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const STEP_SECS = Number(process.env.BENCH_STEP_SECS ?? 5);
/** Offered rates, msg/s; 0 = loggen as fast as it can (the paced sender: 100k/s), 100,000 × BENCH_STEP_SECS messages. */
const RATES = (process.env.BENCH_RATES ?? "2500,5000,10000,20000,40000,60000,80000,100000,120000,160000,0").split(",").map(Number);
const LAT_COUNT = Number(process.env.BENCH_LAT_COUNT ?? 5000);
const LAT_RATE = Number(process.env.BENCH_LAT_RATE ?? 1000);
const SENDER = process.env.BENCH_SENDER ?? "loggen";
const CONFIGS = (process.env.BENCH_CONFIGS ?? "listener,port").split(",");
/** The paced sender's message: RFC 5424, 200 bytes like loggen's. */
const PACED_MESSAGE = (() => {
  const head = "<14>1 2026-11-24T12:00:00.000Z bench relay - - - ";
  return Buffer.from(head + "x".repeat(200 - head.length));
})();

/** A UDP socket in this process: the far end of the latency runs. */
async function latencySink() {
  const s = createSocket("udp4");
  const latencies = [];
  s.on("message", (buf) => {
    const m = /lat=(\d+\.\d+)/.exec(buf.toString("latin1"));
    if (m) latencies.push(performance.now() - Number(m[1]));
  });
  await new Promise((r) => s.bind(0, "127.0.0.1", r));
  return { port: s.address().port, latencies, close: () => new Promise((r) => s.close(r)) };
}

/** Sends LAT_COUNT messages at LAT_RATE to `port`, each with its send time; answers the latencies the sink saw. */
async function latencyRun(port, sink) {
  sink.latencies.length = 0;
  const s = createSocket("udp4");
  const t0 = performance.now();
  for (let i = 0; i < LAT_COUNT; i++) {
    const due = t0 + (i * 1000) / LAT_RATE;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    s.send(`<14>1 - bench relay - - - lat=${performance.now().toFixed(3)} n=${i}`, port, "127.0.0.1");
  }
  await sleep(1500);
  s.close();
  const sorted = [...sink.latencies].sort((a, b) => a - b);
  const q = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
  return { received: sorted.length, p50: q(0.5), p99: q(0.99) };
}

print("forwarding_relay_machine", machine());
print(
  "forwarding_relay_method",
  `${SENDER === "paced" ? "paced sender" : "loggen"} RFC5424 200B over UDP, ${STEP_SECS}s per step, ${REPEATS} repetitions (median); latency ${LAT_COUNT} msgs at ${LAT_RATE}/s`,
);

let ev = null;
let rs = null;
let relay = null;
let sink = null;
const rmem = matchReceiveBuffers();
print("forwarding_relay_rmem_max", rmem.rmemMax);
try {
  rs = await startRsyslog();
  ev = await startEventsKernel(
    ROOT,
    {},
    {
      forwarding: true,
      forwardingConfig: {
        udpFastPath: process.env.BENCH_FAST_PATH !== "false",
        relay: { udp: CONFIGS.includes("port") ? 0 : null, bindAddress: "127.0.0.1" },
      },
    },
  );
  relay = await startRelay(rs.ports.udp);
  sink = await latencySink();
  const dest = await ev.api("POST", "/forwarding/destinations", {
    name: "bench",
    dest_kind: "syslog_udp",
    source_kind: "syslog",
    target: `127.0.0.1:${rs.ports.udp}`,
  });
  const { ForwardingTee } = await import(new URL(`file://${join(ROOT, "dist/plugins/forwarding/services/ForwardingTee.js")}`).href);
  const tee = ev.k.context("forwarding").get(ForwardingTee);
  await tee.reload();
  const listeners = (await ev.api("GET", "/listeners")).listeners;
  const ourPorts = {
    listener: ev.ports["syslog.udp"],
    port: listeners.find((l) => l.name === "relay.udp")?.port,
  };

  // What the events pipeline itself dropped (its UDP reader's 64 MiB backlog): the relay's fast path does not wait for it.
  const pipelineDropped = async () => (await ev.api("GET", "/listeners")).listeners.find((l) => l.name === "syslog.udp")?.counters?.dropped ?? 0;
  const step = async (who, port, rate, rep) => {
    const count = Math.max(20000, Math.round((rate || 100000) * STEP_SECS));
    const ours = who !== "rsyslog";
    const pd0 = ours ? await pipelineDropped() : 0;
    const before = (await settle(rs.count, { quietMs: 1000 })).count;
    const drops0 = udpSocketDrops(port);
    const f0 = tee.status(dest.id);
    const cpu0 = ours ? process.cpuUsage() : null;
    const r0 = who === "rsyslog" ? relay.cpuSecs() : 0;
    const t0 = performance.now();
    const sent =
      SENDER === "paced"
        ? await replayUdp({ payload: PACED_MESSAGE, port, count, rate: rate || 100000 })
        : await runLoggen({ proto: "udp", port, perConn: Math.ceil(count / UDP_CONNS), ratePerConn: Math.round(rate / UDP_CONNS), conns: UDP_CONNS });
    const { count: after, lastChangeMs } = await settle(rs.count);
    const wall = (lastChangeMs - t0) / 1000;
    const got = after - before;
    const f1 = tee.status(dest.id);
    const cpu = cpu0 ? process.cpuUsage(cpu0) : null;
    print(
      "# step",
      `relay=${who} rep=${rep} target=${rate} sent=${sent.sent} send_rate=${Math.round(sent.rate)} collected=${got} lost=${sent.sent - got} relay_socket_drops=${udpSocketDrops(port) - drops0} ` +
        (cpu
          ? `node_cpu_pct=${Math.round(((cpu.user + cpu.system) / 1e6 / wall) * 100)} forwarded=${f1.forwarded - f0.forwarded} pipeline_dropped=${(await pipelineDropped()) - pd0} `
          : `relay_cpu_pct=${Math.round(((relay.cpuSecs() - r0) / wall) * 100)} `) +
        `load=${load()}`,
    );
    return { ok: got >= sent.sent, rate: sent.rate };
  };
  const ladder = async (who, port, rep) => {
    let best = 0;
    for (const rate of RATES) {
      const r = await step(who, port, rate, rep);
      if (!r.ok) break;
      best = Math.max(best, r.rate);
    }
    return Math.round(best);
  };
  const ours = { listener: [], port: [] };
  const ref = [];
  for (let rep = 1; rep <= REPEATS; rep++) {
    for (const c of CONFIGS) ours[c].push(await ladder(c === "listener" ? "ours" : "ours-relay-port", ourPorts[c], rep));
    ref.push(await ladder("rsyslog", relay.port, rep));
  }
  const b = median(ref);
  print("rsyslog_relay_udp_lossless_per_sec", b);
  for (const c of CONFIGS) {
    const a = median(ours[c]);
    const name = c === "listener" ? "forwarding_udp" : "forwarding_relay_port_udp";
    print(`${name}_lossless_per_sec`, a);
    print(`${name}_ratio`, b ? (a / b).toFixed(2) : "n/a");
    print(`${name}_reps`, `ours=${ours[c].join(",")} rsyslog=${ref.join(",")}`);
  }

  // Latency: both relays now send to the sink in this process.
  await ev.api("PUT", `/forwarding/destinations/${dest.id}`, {
    name: "bench",
    dest_kind: "syslog_udp",
    source_kind: "syslog",
    target: `127.0.0.1:${sink.port}`,
  });
  await tee.reload();
  const latOurs = await latencyRun(ourPorts[CONFIGS[0]], sink);
  await relay.stop();
  relay = await startRelay(sink.port);
  const latRef = await latencyRun(relay.port, sink);
  print("forwarding_latency_ms_p50", latOurs.p50.toFixed(2));
  print("forwarding_latency_ms_p99", latOurs.p99.toFixed(2));
  print("forwarding_latency_received", `${latOurs.received}/${LAT_COUNT}`);
  print("rsyslog_relay_latency_ms_p50", latRef.p50.toFixed(2));
  print("rsyslog_relay_latency_ms_p99", latRef.p99.toFixed(2));
  print("rsyslog_relay_latency_received", `${latRef.received}/${LAT_COUNT}`);
  print("forwarding_relay_load_after", load());
} finally {
  rmem.restore();
  await sink?.close().catch(() => undefined);
  await relay?.stop().catch((e) => console.error(e));
  await rs?.stop().catch((e) => console.error(e));
  await ev?.stop().catch((e) => console.error(e));
}
process.exit(0);
