// Node's own UDP floor on this machine (`npm run bench:udp-floor`): what a bare Node process, with none of the service's
// code, costs and holds receiving 200-byte syslog datagrams, and receiving and relaying each one, against rsyslog's
// relay (imudp → omfwd) in the same run. It tells how much of the gap of the syslog and relay benchmarks
// (bench/events-syslog.mjs, bench/forwarding-relay.mjs) is Node's per-datagram path rather than the service.
//
// Modes (BENCH_MODES, in this order by default):
// - node-recv:     a child Node process reads every datagram ('message' event) and counts it;
// - node-relay:    the same, and sends each one on through a UDP socket connected to the collector (what the forwarding
//                  fast path does in its reader thread, minus the hand-over to the main thread);
// - batched-recv:  a child Node process reads with the service's socket (core/util/datagramSocket.ts: recvmmsg through
//                  koffi, up to 64 datagrams a call) and counts each datagram;
// - batched-relay: the same, relaying each batch with one sendmmsg to a socket connected to the collector (what the
//                  service's readers do since the batched socket);
// - rsyslog-relay: a private rsyslogd relay (imudp, two threads, recvmmsg) forwarding each as received (omfwd, UDP).
// The sender: the paced child sender of the relay benchmark (one message every 1/rate s, ~1 ms ticks, 4 sockets). The far
// end of the relays: a private rsyslogd collector writing one line per message. A step is lossless when every datagram
// sent was counted (node-recv) or collected (the relays). The figure per mode is the send rate of its best lossless step
// (ladder BENCH_RATES, BENCH_STEP_SECS each; the median over BENCH_REPEATS), with the receiver's CPU per datagram at
// that step (process CPU over the datagrams it took).
// Prints udp_floor_<mode>_lossless_per_sec, udp_floor_<mode>_cpu_us_per_datagram and `# step` lines.
import { fork } from "node:child_process";
import { createSocket } from "node:dgram";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { load, machine, matchReceiveBuffers, median, print, replayUdp, settle, startRelay, startRsyslog, RECEIVE_BUFFER_BYTES } from "./lib/events-peers.mjs";

/** The child: `node bench/udp-floor.mjs child <recv|relay|batched-recv|batched-relay> <collector port>`; answers {port} once bound, {n, cpu_us} on "stop". */
async function child(mode, target) {
  let n = 0;
  let cpu0 = null;
  const count = () => {
    if (n++ === 0) cpu0 = process.cpuUsage();
  };
  let port;
  if (mode.startsWith("batched-")) {
    const { bindDatagramSocket } = await import("../dist/core/util/datagramSocket.js");
    const s = await bindDatagramSocket({
      type: "udp4",
      host: "127.0.0.1",
      port: 0,
      recvBufferSize: RECEIVE_BUFFER_BYTES,
      onMessage: count,
      onError: () => undefined,
    });
    if (!s.batched) throw new Error("the batched socket did not load (koffi)");
    if (mode === "batched-relay") s.setRelays([s.relay("127.0.0.1", target)]);
    port = s.address().port;
  } else {
    const s = createSocket("udp4");
    const out = createSocket("udp4");
    out.on("error", () => undefined);
    await new Promise((resolve) => out.connect(target, "127.0.0.1", resolve));
    s.on("message", (msg) => {
      count();
      if (mode === "relay") out.send(msg);
    });
    await new Promise((resolve) => s.bind(0, "127.0.0.1", resolve));
    s.setRecvBufferSize(RECEIVE_BUFFER_BYTES);
    port = s.address().port;
  }
  process.on("message", (m) => {
    if (m !== "stop") return;
    const c = cpu0 ? process.cpuUsage(cpu0) : { user: 0, system: 0 };
    process.send({ n, cpu_us: n ? (c.user + c.system) / n : 0 }, () => process.exit(0));
  });
  process.send({ port });
}

if (process.argv[2] === "child") {
  await child(process.argv[3], Number(process.argv[4]));
} else {
  const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
  const STEP_SECS = Number(process.env.BENCH_STEP_SECS ?? 5);
  const RATES = (process.env.BENCH_RATES ?? "10000,20000,30000,40000,50000,60000,80000").split(",").map(Number);
  const MODES = (process.env.BENCH_MODES ?? "node-recv,node-relay,batched-recv,batched-relay,rsyslog-relay").split(",");
  const PAYLOAD = Buffer.from("<14>1 2026-11-25T12:00:00.000Z bench floor - - - ".padEnd(200, "x"));
  const self = fileURLToPath(import.meta.url);

  print("udp_floor_machine", machine());
  print("udp_floor_method", `paced sender, RFC 5424 200 B over UDP, ${STEP_SECS} s per step, ${REPEATS} repetitions (median)`);
  const rmem = matchReceiveBuffers();
  let collector = null;
  try {
    collector = await startRsyslog();

    /** One receiver for one step: {port, stop() → {taken, cpuUs}}; taken = datagrams the receiver itself read, null for rsyslog. */
    const receiver = async (mode) => {
      if (mode === "rsyslog-relay") {
        const relay = await startRelay(collector.ports.udp);
        const cpu0 = relay.cpuSecs();
        return {
          port: relay.port,
          stop: async (sent) => {
            const cpuUs = ((relay.cpuSecs() - cpu0) * 1e6) / sent;
            await relay.stop();
            return { taken: null, cpuUs };
          },
        };
      }
      const c = fork(self, ["child", mode.startsWith("node-") ? mode.slice(5) : mode, String(collector.ports.udp)], {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      const { port } = await new Promise((resolve) => c.once("message", resolve));
      return {
        port,
        stop: async () => {
          const answer = new Promise((resolve) => c.once("message", resolve));
          c.send("stop");
          const r = await answer;
          return { taken: r.n, cpuUs: r.cpu_us };
        },
      };
    };

    const step = async (mode, rate, rep) => {
      const count = Math.max(20000, Math.round(rate * STEP_SECS));
      const r = await receiver(mode);
      const before = (await settle(collector.count, { quietMs: 1000 })).count;
      const t0 = performance.now();
      const sent = await replayUdp({ payload: PAYLOAD, port: r.port, count, rate });
      const { count: after } = await settle(collector.count, { quietMs: 1500 });
      const { taken, cpuUs } = await r.stop(sent.sent);
      const got = mode.endsWith("-recv") ? taken : after - before;
      print(
        "# step",
        `mode=${mode} rep=${rep} target=${rate} sent=${sent.sent} send_rate=${Math.round(sent.rate)} received=${got} lost=${sent.sent - got} ` +
          `cpu_us_per_datagram=${cpuUs.toFixed(2)} sender_cpu_pct=${Math.round((sent.cpuSecs / ((performance.now() - t0) / 1000)) * 100)} load=${load()}`,
      );
      return { ok: got >= sent.sent, rate: sent.rate, cpuUs };
    };

    for (const mode of MODES) {
      const best = [];
      for (let rep = 1; rep <= REPEATS; rep++) {
        let top = { rate: 0, cpuUs: NaN };
        for (const rate of RATES) {
          const r = await step(mode, rate, rep);
          if (!r.ok) break;
          top = r;
        }
        best.push(top);
      }
      const m = median(best.map((b) => b.rate));
      const at = best.find((b) => b.rate === m);
      print(`udp_floor_${mode.replaceAll("-", "_")}_lossless_per_sec`, Math.round(m));
      print(`udp_floor_${mode.replaceAll("-", "_")}_cpu_us_per_datagram`, at ? at.cpuUs.toFixed(2) : "n/a");
      print(`udp_floor_${mode.replaceAll("-", "_")}_reps`, best.map((b) => Math.round(b.rate)).join(","));
    }
    print("udp_floor_load_after", load());
  } finally {
    rmem.restore();
    await collector?.stop().catch((e) => console.error(e));
  }
  process.exit(0);
}
