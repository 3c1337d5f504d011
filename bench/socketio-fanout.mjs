/* global fetch */
// Socket.IO fan-out: BENCH_CLIENTS (default 1000) connected dashboards receiving alert and event broadcasts
// (`npm run bench:socketio-fanout`; needs `npm run build` first).
//
// The service: `node dist/core/main.js` as a child process on a fresh database (DATABASE_URL, else an embedded
// PostgreSQL), every built-in plugin, no embedded poller, the syslog UDP listener on a free loopback port, default
// pipeline settings (events flushed every 250 ms). Seeded over the API: the node 127.0.0.1 (every message is attributed
// to it) and an event rule firing a warning on "BENCHFIRE" and clearing it on "BENCHCLEAR".
// The clients: socket.io-client (websocket transport) with a viewer API token, spread over BENCH_WORKERS (default 4)
// worker threads of this process; each subscribes to alerts.active and events.live, like the dashboard.
// The load, for BENCH_DURATION_SECS (default 30): BENCH_EVENTS_PER_SEC (default 20) syslog messages per second carrying
// their send time, and every second a BENCHFIRE or BENCHCLEAR message (an alert fired or resolved: one alerts.fired /
// alerts.resolved broadcast each).
// Latency: events: receipt minus the send time written in the message (end to end: UDP → listener → batch flush →
// PostgreSQL → broadcast); alerts: receipt minus the transition's at_unix_ms (the engine's commit). The clients share
// the machine (2 cores) with the service, so the figures include the clients' own queueing.
// After the load, the clients are left to drain (until 3 s pass without a delivery, at most 120 s).
// Prints: clients connected, deliveries received / expected, p50 / p99 / max latency of events and of alerts, the
// service's CPU (% of one core) and RSS during the load, PostgreSQL's CPU, the load average.
import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { io } from "socket.io-client";
import { benchStore, bootKernel, load, MAIN, print } from "./lib/kernel.mjs";
import { descendants, procCpuSecs, rssMb, sleep } from "./lib/flows-peers.mjs";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);
const DURATION = Number(process.env.BENCH_DURATION_SECS ?? 30);
const RATE = Number(process.env.BENCH_EVENTS_PER_SEC ?? 20);

if (!isMainThread) {
  // A worker: its share of the clients, latencies kept until the main thread asks for them.
  const { url, token, count } = workerData;
  const events = [];
  const alerts = [];
  const sockets = [];
  let connected = 0;
  const connect = () =>
    new Promise((resolve, reject) => {
      const s = io(url, { transports: ["websocket"], auth: { token }, reconnection: false, forceNew: true, timeout: 60000 });
      sockets.push(s);
      s.on("events.events", (batch) => {
        const now = Date.now();
        for (const e of batch) {
          const t = /t=(\d+)/.exec(e.message)?.[1];
          if (t) events.push(now - Number(t));
        }
      });
      const onAlert = (t) => alerts.push(Date.now() - t.at_unix_ms);
      s.on("alerts.fired", onAlert);
      s.on("alerts.resolved", onAlert);
      s.once("connect_error", reject);
      s.once("connect", () => {
        let acks = 0;
        const ack = (r) => {
          if (!r.ok) return reject(new Error(r.error.message));
          if (++acks === 2) {
            connected++;
            resolve();
          }
        };
        s.emit("subscribe", { channel: "alerts.active" }, ack);
        s.emit("subscribe", { channel: "events.live", filter: {} }, ack);
      });
    });
  for (let i = 0; i < count; i += 25) await Promise.all(Array.from({ length: Math.min(25, count - i) }, connect));
  parentPort.postMessage({ type: "connected", connected });
  parentPort.on("message", (m) => {
    if (m === "reset") {
      events.length = 0;
      alerts.length = 0;
    } else if (m === "count") {
      parentPort.postMessage({ type: "count", n: events.length + alerts.length });
    } else if (m === "report") {
      const disconnected = sockets.filter((s) => !s.connected).length;
      parentPort.postMessage({ type: "report", events, alerts, disconnected });
      for (const s of sockets) s.close();
    }
  });
} else {
  if (!existsSync(MAIN)) {
    console.error(`${MAIN} is missing: run "npm run build" first (npm run bench:socketio-fanout does).`);
    process.exit(1);
  }
  const admin = randomBytes(24).toString("hex");
  const { dataDir, database, cleanup } = benchStore("fanout");
  try {
    const freePort = await new Promise((resolve) => {
      const s = createSocket("udp4");
      s.bind(0, "127.0.0.1", () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
    });
    const configFile = join(dataDir, "bench-config.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        pluginConfig: {
          polling: { embeddedPoller: false },
          events: { syslog: { udp: freePort, tcp: null, tls: null, bindAddress: "127.0.0.1" }, traps: { udp: null } },
          flows: { udp: null },
        },
      }),
    );
    const kernel = await bootKernel({
      DATABASE_URL: await database(),
      NMS_DATA_DIR: dataDir,
      NMS_BOOTSTRAP_TOKEN: admin,
      NMS_CONFIG: configFile,
      NMS_LOG_LEVEL: "warn",
    });
    const api = async (method, path, body) => {
      const res = await fetch(`${kernel.url}/api/v1${path}`, {
        method,
        headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    await api("POST", "/nodes", { name: "bench-src", address: "127.0.0.1" });
    await api("POST", "/event-rules", {
      name: "bench fire",
      match_kind: "substring",
      pattern: "BENCHFIRE",
      clear_pattern: "BENCHCLEAR",
      severity: "warning",
      source_kind: "syslog",
    });
    const { token } = await api("POST", "/tokens", { name: "bench viewer", role: "viewer", scope: "All" });

    const started = Date.now();
    const workers = Array.from({ length: WORKERS }, (_, w) => {
      const count = Math.floor(CLIENTS / WORKERS) + (w < CLIENTS % WORKERS ? 1 : 0);
      return new Worker(fileURLToPath(import.meta.url), { workerData: { url: kernel.url, token, count } });
    });
    const messages = workers.map(
      (w) =>
        new Promise((resolve, reject) => {
          w.once("error", reject);
          w.once("message", resolve);
        }),
    );
    const connected = (await Promise.all(messages)).reduce((s, m) => s + m.connected, 0);
    const connectSecs = (Date.now() - started) / 1000;
    await sleep(2000);
    for (const w of workers) w.postMessage("reset");

    const pid = kernel.child.pid;
    // The embedded PostgreSQL (benchStore's) runs under this process; an external one is not measured.
    const pgPids = () =>
      descendants(process.pid).filter((p) => {
        try {
          return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "postgres";
        } catch {
          return false;
        }
      });
    const cpu0 = procCpuSecs(pid);
    const pg0 = pgPids().reduce((s, p) => s + procCpuSecs(p), 0);
    const rss = [];
    const udp = createSocket("udp4");
    let sent = 0;
    let alertSends = 0;
    const send = (text) =>
      new Promise((r) => udp.send(Buffer.from(`<14>1 ${new Date().toISOString()} bench-src bench - - - ${text}`), freePort, "127.0.0.1", () => r()));
    const t0 = Date.now();
    let nextAlert = t0 + 1000;
    while (Date.now() - t0 < DURATION * 1000) {
      const due = t0 + (sent * 1000) / RATE;
      if (Date.now() >= due) {
        await send(`BENCH seq=${sent} t=${Date.now()}`);
        sent++;
      }
      if (Date.now() >= nextAlert) {
        await send(`${alertSends % 2 ? "BENCHCLEAR" : "BENCHFIRE"} seq=${alertSends} t=${Date.now()}`);
        alertSends++;
        nextAlert += 1000;
        rss.push(rssMb(pid) ?? 0);
      }
      await sleep(Math.max(0, Math.min(due, nextAlert) - Date.now()));
    }
    const elapsed = (Date.now() - t0) / 1000;
    const cpu = ((procCpuSecs(pid) - cpu0) / elapsed) * 100;
    const pgCpu = ((pgPids().reduce((s, p) => s + procCpuSecs(p), 0) - pg0) / elapsed) * 100;
    udp.close();
    // Drain: wait until the clients have stopped receiving (3 s without a new delivery, at most 120 s).
    const count = async () =>
      (
        await Promise.all(
          workers.map((w) => {
            const p = new Promise((resolve) => w.once("message", (m) => resolve(m.n)));
            w.postMessage("count");
            return p;
          }),
        )
      ).reduce((a, b) => a + b, 0);
    const drainStart = Date.now();
    let last = -1;
    let stableSince = Date.now();
    while (Date.now() - drainStart < 120_000) {
      const n = await count();
      if (n !== last) {
        last = n;
        stableSince = Date.now();
      } else if (Date.now() - stableSince >= 3000) break;
      await sleep(500);
    }
    const drainSecs = (stableSince - drainStart) / 1000;

    const reports = workers.map((w) => new Promise((resolve) => w.once("message", resolve)));
    for (const w of workers) w.postMessage("report");
    const all = await Promise.all(reports);
    const events = all.flatMap((r) => r.events).sort((a, b) => a - b);
    const alerts = all.flatMap((r) => r.alerts).sort((a, b) => a - b);
    const disconnected = all.reduce((s, r) => s + r.disconnected, 0);
    const q = (xs, p) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] : NaN);
    for (const w of workers) await w.terminate();
    const history = await api("GET", "/alerts/history?limit=1000");
    const stored = await api("GET", "/events?limit=5");
    if (process.env.BENCH_DEBUG) console.error(JSON.stringify({ history: history.length, events: stored.map((e) => [e.node_id, e.action, e.message]) }));
    await kernel.stop();

    print("socketio_fanout_clients", connected);
    print("socketio_fanout_connect_secs", connectSecs.toFixed(1));
    print("socketio_fanout_disconnected", disconnected);
    print("socketio_fanout_event_messages_sent", sent);
    print("socketio_fanout_event_deliveries", `${events.length}/${(sent + alertSends) * connected}`);
    print("socketio_fanout_event_latency_ms_p50", q(events, 0.5));
    print("socketio_fanout_event_latency_ms_p99", q(events, 0.99));
    print("socketio_fanout_event_latency_ms_max", events.at(-1));
    print("socketio_fanout_alert_transitions_sent", alertSends);
    print("socketio_fanout_alert_history_rows", history.length);
    print("socketio_fanout_alert_deliveries", `${alerts.length}/${alertSends * connected}`);
    print("socketio_fanout_alert_latency_ms_p50", q(alerts, 0.5));
    print("socketio_fanout_alert_latency_ms_p99", q(alerts, 0.99));
    print("socketio_fanout_alert_latency_ms_max", alerts.at(-1));
    print("socketio_fanout_drain_secs_after_load", drainSecs.toFixed(1));
    print("socketio_fanout_service_cpu_pct", cpu.toFixed(0));
    print("socketio_fanout_postgres_cpu_pct", pgCpu.toFixed(0));
    print("socketio_fanout_service_rss_mb_max", Math.max(...rss));
    print("load", load());
  } finally {
    await cleanup();
  }
  process.exit(0);
}
