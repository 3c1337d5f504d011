/* global fetch */
// SNMP poll throughput of one poller's engine against Prometheus snmp_exporter (`npm run bench:poll-throughput`;
// needs `npm run build` first, and the Debian packages snmpsim and prometheus-snmp-exporter).
//
// 1. Writes BENCH_DEVICES (default 500) synthetic .snmprec recordings in a temporary folder: system group, ifTable and
//    ifXTable with 4 interfaces (ifIn/OutOctets and ifHCIn/OutOctets growing with time through snmpsim's `numeric`
//    variation module), and a small HOST-RESOURCES part (2 processors, 3 storage rows), as the tests' recordings have.
// 2. Starts a fleet: one snmpsimd process per core (`--v2c-arch`), each serving a slice of the devices, one device per
//    UDP port on 127.0.0.1, community `public` (snmpsimd runs as nobody:nogroup when we are root).
// 3. Polls every device with the compiled SnmpPoller (dist/plugins/polling/snmp/SnmpPoller.js) at the plugin's defaults
//    (timeout 2000 ms, 1 retry, HOST-RESOURCES on) through a bounded-concurrency loop of BENCH_CONCURRENCY (default 32,
//    the plugin's default) for 1 warm-up cycle and BENCH_CYCLES (default 5) timed cycles.
// 4. Starts /usr/bin/prometheus-snmp-exporter with a generated snmp.yml whose module walks the same IF-MIB columns the
//    poller reads (plus a get of sysUpTime) and scrapes every device with the same concurrency, 1 warm-up cycle and
//    BENCH_EXPORTER_CYCLES (default 3) timed cycles.
//
// Prints one key=value line per figure:
//   poll_interfaces_per_sec      interfaces whose octet counters were read, per second of the timed cycles
//   poll_devices_per_sec         devices that answered, per second
//   exporter_interfaces_per_sec  interfaces with an ifHCInOctets (or ifInOctets) sample in the scrape, per second
//   exporter_devices_per_sec     scrapes answered with HTTP 200, per second
//   ratio                        poll_interfaces_per_sec / exporter_interfaces_per_sec
// plus details (failures, requests per poll, CPU seconds of each process during the timed cycles). Progress goes to
// stderr. Every process started here is stopped by its pid, and the temporary folder removed, also on failure.
import { spawn, spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const POLLER = join(ROOT, "dist/plugins/polling/snmp/SnmpPoller.js");
const LOOPBACK = "127.0.0.1";
const int = (name, dflt) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
};
const DEVICES = int("BENCH_DEVICES", 500);
const IFS = 4;
const CONCURRENCY = int("BENCH_CONCURRENCY", 32);
const CYCLES = int("BENCH_CYCLES", 5);
const EXPORTER_CYCLES = int("BENCH_EXPORTER_CYCLES", 3);
const PROCS = int("BENCH_SIM_PROCS", cpus().length);
const TIMEOUT_MS = 2000; // pluginConfig.polling.snmpTimeoutMs default
const RETRIES = 1; // pluginConfig.polling.snmpRetries default
const SNMPSIMD = "/usr/bin/snmpsimd";
const EXPORTER = "/usr/bin/prometheus-snmp-exporter";
const MODULE = "nms_if";

for (const [file, hint] of [
  [POLLER, 'run "npm run build" first (npm run bench:poll-throughput does)'],
  [SNMPSIMD, "install the Debian package snmpsim"],
  [EXPORTER, "install the Debian package prometheus-snmp-exporter"],
]) {
  if (!existsSync(file)) {
    console.error(`${file} is missing: ${hint}.`);
    process.exit(1);
  }
}

const log = (msg) => console.error(`[${(performance.now() / 1000).toFixed(1)} s] ${msg}`);

// ---- cleanup: every child by its pid, the temporary folder ------------------------------------------

const children = new Set();
let dir = null;
function cleanup() {
  for (const c of children) {
    try {
      process.kill(c.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  children.clear();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
}
process.on("exit", cleanup);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    cleanup();
    process.exit(sig === "SIGINT" ? 130 : 143);
  });
}

function start(cmd, args, logFile) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  const chunks = [];
  const keep = (b) => {
    chunks.push(b);
    if (chunks.length > 200) chunks.shift();
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  children.add(child);
  child.once("exit", () => {
    children.delete(child);
    try {
      writeFileSync(logFile, Buffer.concat(chunks));
    } catch {
      // folder removed already
    }
  });
  child.output = () => Buffer.concat(chunks).toString();
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(child.pid, "SIGTERM");
  const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid, "SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSecs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

// ---- recordings -----------------------------------------------------------------------------------

/** The .snmprec text of synthetic device `idx` (1-based): rows sorted by OID, as snmpsim requires. */
function recording(idx) {
  const rows = [];
  const add = (oid, tag, value) => rows.push([oid, tag, value]);
  const name = `sim-${String(idx).padStart(4, "0")}`;
  const SYS = "1.3.6.1.2.1.1";
  add(`${SYS}.1.0`, "4", `Simulated device ${idx} (${IFS} interfaces)`);
  add(`${SYS}.2.0`, "6", "1.3.6.1.4.1.8072.3.2.10");
  add(`${SYS}.3.0`, "67:numeric", `rate=100,initial=${100000 + idx * 1000}`);
  add(`${SYS}.4.0`, "4", "bench@localhost");
  add(`${SYS}.5.0`, "4", name);
  add(`${SYS}.6.0`, "4", `rack-${idx % 40}`);
  add("1.3.6.1.2.1.2.1.0", "2", IFS);
  const IF = "1.3.6.1.2.1.2.2.1";
  const IFX = "1.3.6.1.2.1.31.1.1.1";
  for (let i = 1; i <= IFS; i++) {
    const bps = 1000 * (1 + (idx % 7)) * i; // bytes/s, differs per device and interface
    const mbps = i === 1 ? 10000 : 1000;
    add(`${IF}.1.${i}`, "2", i);
    add(`${IF}.2.${i}`, "4", `GigabitEthernet0/${i}`);
    add(`${IF}.3.${i}`, "2", 6);
    add(`${IF}.5.${i}`, "66", Math.min(mbps * 1_000_000, 4294967295));
    add(`${IF}.7.${i}`, "2", 1);
    add(`${IF}.8.${i}`, "2", i === IFS ? 2 : 1);
    add(`${IF}.10.${i}`, "65:numeric", `rate=${bps},initial=${1000 * i},wrap=1`);
    add(`${IF}.13.${i}`, "65", 0);
    add(`${IF}.14.${i}`, "65", 0);
    add(`${IF}.16.${i}`, "65:numeric", `rate=${bps >> 1},initial=${500 * i},wrap=1`);
    add(`${IF}.19.${i}`, "65", 0);
    add(`${IF}.20.${i}`, "65", 0);
    add(`${IFX}.1.${i}`, "4", `Gi0/${i}`);
    add(`${IFX}.6.${i}`, "70:numeric", `rate=${bps},initial=${5_000_000_000 + i}`);
    add(`${IFX}.10.${i}`, "70:numeric", `rate=${bps >> 1},initial=${7_000_000_000 + i}`);
    add(`${IFX}.15.${i}`, "66", mbps);
    add(`${IFX}.18.${i}`, "4", `port ${i} of ${name}`);
  }
  const HR = "1.3.6.1.2.1.25";
  add(`${HR}.1.1.0`, "67:numeric", "rate=100,initial=0");
  for (const [s, descr, units, size, used] of [
    [1, "Physical memory", 1024, 8388608, 2097152],
    [3, "Virtual memory", 1024, 10485760, 5242880],
    [31, "/", 4096, 26214400, 6553600],
  ]) {
    add(`${HR}.2.3.1.1.${s}`, "2", s);
    add(`${HR}.2.3.1.3.${s}`, "4", descr);
    add(`${HR}.2.3.1.4.${s}`, "2", units);
    add(`${HR}.2.3.1.5.${s}`, "2", size);
    add(`${HR}.2.3.1.6.${s}`, "2", used);
  }
  for (const [cpu, load] of [
    [196608, 17],
    [196609, 42],
  ]) {
    add(`${HR}.3.3.1.2.${cpu}`, "2", load);
  }
  const key = (oid) => oid.split(".").map(Number);
  rows.sort((a, b) => {
    const x = key(a[0]);
    const y = key(b[0]);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  });
  return rows.map(([oid, tag, value]) => `${oid}|${tag}|${value}\n`).join("");
}

/** The IF-MIB columns SnmpPoller walks (plugins/polling/snmp/collectors/interfaces.ts), for the exporter module. */
const IF_COLUMNS = {
  ifDescr: ["1.3.6.1.2.1.2.2.1.2", "DisplayString"],
  ifSpeed: ["1.3.6.1.2.1.2.2.1.5", "gauge"],
  ifOperStatus: ["1.3.6.1.2.1.2.2.1.8", "gauge"],
  ifInOctets: ["1.3.6.1.2.1.2.2.1.10", "counter"],
  ifInDiscards: ["1.3.6.1.2.1.2.2.1.13", "counter"],
  ifInErrors: ["1.3.6.1.2.1.2.2.1.14", "counter"],
  ifOutOctets: ["1.3.6.1.2.1.2.2.1.16", "counter"],
  ifOutDiscards: ["1.3.6.1.2.1.2.2.1.19", "counter"],
  ifOutErrors: ["1.3.6.1.2.1.2.2.1.20", "counter"],
  ifName: ["1.3.6.1.2.1.31.1.1.1.1", "DisplayString"],
  ifHCInOctets: ["1.3.6.1.2.1.31.1.1.1.6", "counter"],
  ifHCOutOctets: ["1.3.6.1.2.1.31.1.1.1.10", "counter"],
  ifHighSpeed: ["1.3.6.1.2.1.31.1.1.1.15", "gauge"],
  ifAlias: ["1.3.6.1.2.1.31.1.1.1.18", "DisplayString"],
};

/** snmp.yml in snmp_exporter 0.21's format (auth and version inside the module), numeric OIDs (no MIBs needed). */
function exporterConfig() {
  const lines = [`${MODULE}:`, "  walk:"];
  for (const [oid] of Object.values(IF_COLUMNS)) lines.push(`  - ${oid}`);
  lines.push("  get:", "  - 1.3.6.1.2.1.1.3.0", "  metrics:");
  lines.push("  - {name: sysUpTime, oid: 1.3.6.1.2.1.1.3, type: gauge, help: sysUpTime}");
  for (const [name, [oid, type]] of Object.entries(IF_COLUMNS)) {
    if (name === "ifName") continue; // a label of every other column
    lines.push(
      `  - name: ${name}`,
      `    oid: ${oid}`,
      `    type: ${type}`,
      `    help: ${name}`,
      "    indexes:",
      "    - {labelname: ifIndex, type: gauge}",
      "    lookups:",
      "    - labels: [ifIndex]",
      "      labelname: ifName",
      `      oid: ${IF_COLUMNS.ifName[0]}`,
      "      type: DisplayString",
    );
  }
  lines.push("  version: 2", "  max_repetitions: 25", `  retries: ${RETRIES}`, `  timeout: ${TIMEOUT_MS / 1000}s`, "  auth:", "    community: public", "");
  return lines.join("\n");
}

// ---- ports --------------------------------------------------------------------------------------------

/** `n` UDP ports on loopback that are free right now: bound together (port 0, kernel's choice), then released. */
async function freeUdpPorts(n) {
  const sockets = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = createSocket("udp4");
      sockets.push(s);
      await new Promise((resolve, reject) => {
        s.once("error", reject);
        s.bind(0, LOOPBACK, resolve);
      });
    }
    return sockets.map((s) => s.address().port);
  } finally {
    await Promise.all(sockets.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

function freeTcpPort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, LOOPBACK, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// ---- polling loops ---------------------------------------------------------------------------------

/** Runs fn(i) for i in order with at most `concurrency` in flight. */
async function bounded(order, concurrency, fn) {
  let next = 0;
  const worker = async () => {
    while (next < order.length) await fn(order[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, order.length) }, worker));
}

/**
 * Device order for every cycle: interleaved over the snmpsimd processes (device 1 of process 0, device 1 of process 1,
 * ...), so that the requests in flight spread over all the fleet's processes rather than queueing on one slice.
 */
function interleaved(slices) {
  const order = [];
  const longest = Math.max(...slices.map((s) => s.length));
  for (let k = 0; k < longest; k++) for (const s of slices) if (k < s.length) order.push(s[k]);
  return order;
}

async function runCycles(label, cycles, order, pollOne, pids) {
  const totals = { devices: 0, interfaces: 0, failures: 0, secs: 0, requests: 0, errors: new Map() };
  const cpu0 = pids.map(cpuSecs);
  const self0 = process.cpuUsage();
  for (let c = 0; c <= cycles; c++) {
    const warm = c === 0;
    const got = { devices: 0, interfaces: 0, failures: 0, requests: 0, errors: new Map() };
    const t0 = performance.now();
    await bounded(order, CONCURRENCY, async (d) => {
      const r = await pollOne(d);
      got.requests += r.requests ?? 0;
      if (r.ok) {
        got.devices++;
        got.interfaces += r.interfaces;
      } else {
        got.failures++;
        got.errors.set(r.error, (got.errors.get(r.error) ?? 0) + 1);
      }
    });
    const secs = (performance.now() - t0) / 1000;
    log(`${label} ${warm ? "warm-up" : `cycle ${c}/${cycles}`}: ${got.devices}/${order.length} devices, ${got.interfaces} interfaces in ${secs.toFixed(2)} s`);
    if (warm) {
      cpu0.splice(0, cpu0.length, ...pids.map(cpuSecs));
      Object.assign(self0, process.cpuUsage());
      continue;
    }
    totals.devices += got.devices;
    totals.interfaces += got.interfaces;
    totals.failures += got.failures;
    totals.requests += got.requests;
    totals.secs += secs;
    for (const [e, n] of got.errors) totals.errors.set(e, (totals.errors.get(e) ?? 0) + n);
  }
  totals.cpu = pids.map((p, i) => cpuSecs(p) - cpu0[i]);
  const self = process.cpuUsage(self0);
  totals.selfCpu = (self.user + self.system) / 1e6;
  return totals;
}

const fmt = (n) => (Number.isFinite(n) ? (Math.round(n * 10) / 10).toString() : "NaN");

// ---- main -----------------------------------------------------------------------------------------

async function main() {
  const { SnmpPoller } = await import(POLLER);
  dir = mkdtempSync(join(tmpdir(), "nms-bench-poll-"));
  const data = join(dir, "data");
  const cache = join(dir, "cache");
  mkdirSync(join(data, "public"), { recursive: true });
  mkdirSync(cache);
  // --v2c-arch: community "public" selects data/public/, where the file named after the transport ID of the endpoint
  // the request came in on (1.3.6.1.6.1.1.<n>, n counted over --agent-udpv4-endpoint with --transport-id-offset) is
  // the device answering. Device d (1-based) is transport ID d - 1.
  for (let d = 1; d <= DEVICES; d++) writeFileSync(join(data, "public", `1.3.6.1.6.1.1.${d - 1}.snmprec`), recording(d));
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  chmodSync(dir, 0o755);
  if (isRoot) {
    // snmpsimd refuses to run as root; it drops to nobody:nogroup, which must read the data and write the index cache.
    const hand = (p) => {
      chownSync(p, 65534, 65534);
      if (statSync(p).isDirectory()) for (const e of readdirSync(p)) hand(join(p, e));
    };
    hand(dir);
  }

  const ports = await freeUdpPorts(DEVICES);
  const slices = [];
  const sims = [];
  for (let p = 0; p < PROCS; p++) {
    const first = Math.floor((p * DEVICES) / PROCS);
    const last = Math.floor(((p + 1) * DEVICES) / PROCS) - 1;
    if (last < first) continue;
    const argsFile = join(dir, `args.${p}`);
    const slice = [];
    for (let i = first; i <= last; i++) slice.push(i);
    writeFileSync(argsFile, slice.map((i) => `--agent-udpv4-endpoint=${LOOPBACK}:${ports[i]}\n`).join(""));
    slices.push(slice);
    sims.push(
      start(
        SNMPSIMD,
        [
          "--v2c-arch",
          `--data-dir=${data}`,
          `--cache-dir=${cache}`,
          `--transport-id-offset=${first}`,
          `--args-from-file=${argsFile}`,
          "--logging-method=null",
          ...(isRoot ? ["--process-user=nobody", "--process-group=nogroup"] : []),
        ],
        join(dir, `snmpsimd.${p}.log`),
      ),
    );
  }
  log(
    `fleet: ${DEVICES} devices × ${IFS} interfaces, ${sims.length} snmpsimd processes (pids ${sims.map((s) => s.pid).join(", ")}); waiting for the index build`,
  );

  const target = (d) => ({
    node_id: `dev-${d}`,
    name: `sim-${d + 1}`,
    address: LOOPBACK,
    snmp_port: ports[d],
    pool: "default",
    interval_secs: 60,
    snmp: { version: "2c", community: "public" },
    templates: [],
    url_check: null,
    dns_check: null,
  });

  // Ready when the first and last device of every process answers with the expected sysName.
  const probe = new SnmpPoller({ timeoutMs: 1000, retries: 0, hostResources: false });
  const deadline = Date.now() + 300_000;
  for (const [p, slice] of slices.entries()) {
    for (const d of [slice[0], slice[slice.length - 1]]) {
      for (;;) {
        const sim = sims[p];
        if (sim.exitCode !== null) throw new Error(`snmpsimd ${p} exited with ${sim.exitCode}:\n${sim.output()}`);
        const r = await probe.poll(target(d));
        if (r.answered) {
          const want = `sim-${String(d + 1).padStart(4, "0")}`;
          if (r.facts?.sys_name !== want) throw new Error(`port ${ports[d]} answered as ${r.facts?.sys_name}, expected ${want}`);
          break;
        }
        if (Date.now() > deadline) throw new Error(`snmpsimd ${p} did not answer on udp ${ports[d]} within 300 s:\n${sim.output()}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
  log("fleet answers");
  const order = interleaved(slices);
  const simPids = sims.map((s) => s.pid);

  // ---- our engine -----------------------------------------------------------------------------------
  const poller = new SnmpPoller({ timeoutMs: TIMEOUT_MS, retries: RETRIES });
  const targets = order.map(target);
  const byDevice = new Map(order.map((d, i) => [d, targets[i]]));
  const ours = await runCycles(
    "poller",
    CYCLES,
    order,
    async (d) => {
      const r = await poller.poll(byDevice.get(d));
      const interfaces = r.interfaces.filter((i) => i.counters.in_octets !== null && i.counters.out_octets !== null).length;
      const ok = r.answered && !r.error && interfaces === IFS;
      return { ok, interfaces, requests: r.requests, error: r.error ?? (ok ? null : `${interfaces} interfaces`) };
    },
    simPids,
  );

  // ---- prometheus snmp_exporter -----------------------------------------------------------------------
  const conf = join(dir, "snmp.yml");
  writeFileSync(conf, exporterConfig());
  const dry = spawnSync(EXPORTER, [`--config.file=${conf}`, "--dry-run"], { encoding: "utf8" });
  if (dry.status !== 0) throw new Error(`snmp_exporter rejects the generated snmp.yml:\n${dry.stdout}${dry.stderr}`);
  const httpPort = await freeTcpPort();
  const exporter = start(EXPORTER, [`--config.file=${conf}`, `--web.listen-address=${LOOPBACK}:${httpPort}`, "--log.level=warn"], join(dir, "exporter.log"));
  const base = `http://${LOOPBACK}:${httpPort}`;
  for (let i = 0; ; i++) {
    if (exporter.exitCode !== null) throw new Error(`snmp_exporter exited with ${exporter.exitCode}:\n${exporter.output()}`);
    try {
      if ((await fetch(`${base}/metrics`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 100) throw new Error(`snmp_exporter not listening on ${base}:\n${exporter.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`snmp_exporter pid ${exporter.pid} on ${base}, module ${MODULE}`);
  const theirs = await runCycles(
    "exporter",
    EXPORTER_CYCLES,
    order,
    async (d) => {
      let res;
      try {
        res = await fetch(`${base}/snmp?target=${LOOPBACK}:${ports[d]}&module=${MODULE}`);
      } catch (err) {
        return { ok: false, interfaces: 0, error: `fetch: ${err.message}` };
      }
      const body = await res.text();
      if (res.status !== 200) return { ok: false, interfaces: 0, error: `HTTP ${res.status}: ${body.split("\n")[0].slice(0, 120)}` };
      const hc = new Set();
      const c32 = new Set();
      for (const line of body.split("\n")) {
        const m = /^if(HC)?(In|Out)Octets\{.*ifIndex="(\d+)"/.exec(line);
        if (m && m[2] === "In") (m[1] ? hc : c32).add(m[3]);
      }
      const interfaces = Math.max(hc.size, c32.size);
      return { ok: interfaces === IFS, interfaces, error: interfaces === IFS ? null : `${interfaces} interfaces in the scrape` };
    },
    [...simPids, exporter.pid],
  );
  await stop(exporter);

  // ---- figures ------------------------------------------------------------------------------------------
  const pollIfs = ours.interfaces / ours.secs;
  const expIfs = theirs.interfaces / theirs.secs;
  const out = {
    poll_interfaces_per_sec: fmt(pollIfs),
    poll_devices_per_sec: fmt(ours.devices / ours.secs),
    exporter_interfaces_per_sec: fmt(expIfs),
    exporter_devices_per_sec: fmt(theirs.devices / theirs.secs),
    ratio: (pollIfs / expIfs).toFixed(2),
    poll_failures: ours.failures,
    exporter_failures: theirs.failures,
    poll_requests_per_device: fmt(ours.requests / (ours.devices + ours.failures)),
    poll_cpu_secs_poller: fmt(ours.selfCpu),
    poll_cpu_secs_snmpsimd: ours.cpu.map(fmt).join("/"),
    exporter_cpu_secs_exporter: fmt(theirs.cpu[theirs.cpu.length - 1]),
    exporter_cpu_secs_client: fmt(theirs.selfCpu),
    exporter_cpu_secs_snmpsimd: theirs.cpu.slice(0, -1).map(fmt).join("/"),
    poll_timed_secs: fmt(ours.secs),
    exporter_timed_secs: fmt(theirs.secs),
    fleet: `devices:${DEVICES},interfaces_each:${IFS},snmpsimd_procs:${sims.length},concurrency:${CONCURRENCY},cycles:${CYCLES}/${EXPORTER_CYCLES}`,
    load_average: loadavg()
      .map((l) => l.toFixed(2))
      .join(","),
  };
  for (const [k, v] of Object.entries(out)) console.log(`${k}=${v}`);
  for (const [label, t] of [
    ["poller", ours],
    ["exporter", theirs],
  ]) {
    for (const [e, n] of t.errors) console.error(`${label} failure ×${n}: ${e}`);
  }
  for (const s of sims) await stop(s);
}

try {
  await main();
} catch (err) {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
} finally {
  cleanup();
}
