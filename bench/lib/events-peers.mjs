// Reference peers and load generators for the events benchmarks (bench/events-*.mjs): loggen (syslog-ng's load
// generator, unpacked from its Debian package because syslog-ng-core conflicts with the installed rsyslog), a private
// rsyslogd collector (UDP, TCP, TLS into one file), a private rsyslogd storing into PostgreSQL through its ompgsql output
// (Debian's rsyslog-pgsql and SystemEvents table), a private snmptrapd (one line per trap), one genuine snmptrap v2c
// datagram captured from Net-SNMP's snmptrap, and a paced UDP replayer that runs in a child process (this file run as
// `node bench/lib/events-peers.mjs replay <json>`) so that the sender does not share the kernel's event loop.
// Everything targets 127.0.0.1 only; daemons are stopped by their own pid, never by name.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { load, print } from "./kernel.mjs";

export const CACHE = process.env.BENCH_CACHE_DIR ?? "/tmp/nms-bench";
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export { load, print };
/**
 * What both syslog receivers ask for: rsyslog's imudp `rcvbufSize`, the service's `syslog.udpReceiveBufferBytes` (its
 * default, 32 MiB; the kernel doubles both). 8 MiB before 2026-11-29 evening, when the service could only ask.
 */
export const RECEIVE_BUFFER_BYTES = 32 << 20;
const RMEM_MAX = "/proc/sys/net/core/rmem_max";

/**
 * Lets every UDP receiver's buffer be what rsyslog's is. rsyslog, as root, forces its rcvbufSize past net.core.rmem_max
 * (SO_RCVBUFFORCE), and so does the service where its batched socket loads; Node's own setRecvBufferSize (the service
 * without koffi, the bare Node receivers of bench/udp-floor.mjs) has only SO_RCVBUF, which the kernel caps at rmem_max.
 * As root, and unless BENCH_RMEM_MAX=keep, rmem_max is raised to RECEIVE_BUFFER_BYTES for the run (the setting
 * docs/events.md recommends in production); returns the value in force and a restore().
 */
export function matchReceiveBuffers() {
  const before = Number(readFileSync(RMEM_MAX, "utf8").trim());
  const keep = { rmemMax: before, restore: () => undefined };
  if (process.env.BENCH_RMEM_MAX === "keep" || before >= RECEIVE_BUFFER_BYTES || process.getuid?.() !== 0) return keep;
  try {
    writeFileSync(RMEM_MAX, String(RECEIVE_BUFFER_BYTES));
  } catch {
    return keep;
  }
  return { rmemMax: RECEIVE_BUFFER_BYTES, restore: () => writeFileSync(RMEM_MAX, String(before)) };
}
export const machine = () => `${cpus().length}cpu,load=${load()},node=${process.version}`;
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

/** A TCP and UDP port free on 127.0.0.1 right now (the kernel picks it; both protocols checked). */
export async function freePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const p = s.address().port;
        s.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise((resolve) => {
      const u = createSocket("udp4");
      u.once("error", () => resolve(false));
      u.bind(port, "127.0.0.1", () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}

/** CPU seconds (user + system) a process has used, from /proc (0 when it is gone). */
export function procCpuSecs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return (Number(rest[11]) + Number(rest[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

/** Datagrams the kernel dropped on the UDP socket(s) bound to 127.0.0.1:port (receive buffer full), from /proc/net/udp. */
export function udpSocketDrops(port) {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  let drops = 0;
  for (const line of readFileSync("/proc/net/udp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 12 && f[1].endsWith(hex)) drops += Number(f[f.length - 1]);
  }
  return drops;
}

/** Polls `count()` until it has not changed for `quietMs`; resolves with the last value and when it last changed. */
export async function settle(count, { quietMs = 2000, everyMs = 250, maxMs = 600000 } = {}) {
  const t0 = performance.now();
  let last = await count();
  let changed = performance.now();
  while (performance.now() - changed < quietMs && performance.now() - t0 < maxMs) {
    await sleep(everyMs);
    const n = await count();
    if (n !== last) {
      last = n;
      changed = performance.now();
    }
  }
  return { count: last, lastChangeMs: changed };
}

/** Counts the lines of a growing file incrementally (only the bytes appended since the last call are read). */
export function lineCounter(file) {
  let offset = 0;
  let lines = 0;
  const buf = Buffer.allocUnsafe(1 << 20);
  return () => {
    if (!existsSync(file)) return lines;
    const size = statSync(file).size;
    if (size < offset) offset = lines = 0;
    const fd = openSync(file, "r");
    try {
      while (offset < size) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, size - offset), offset);
        if (n <= 0) break;
        for (let i = 0; i < n; i++) if (buf[i] === 10) lines++;
        offset += n;
      }
    } finally {
      closeSync(fd);
    }
    return lines;
  };
}

function waitExit(child) {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));
}

async function waitListening(check, what, ms = 15000) {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${what} is not listening after ${ms / 1000} s`);
}

const tcpOpen = (port) =>
  new Promise((resolve) => {
    import("node:net").then(({ connect }) => {
      const c = connect(port, "127.0.0.1");
      c.once("connect", () => (c.destroy(), resolve(true)));
      c.once("error", () => resolve(false));
    });
  });

const udpBound = (port) => readFileSync("/proc/net/udp", "utf8").includes(`0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`);

// ---- loggen ------------------------------------------------------------------------------------------------------

/** The unpacked loggen binary and its environment: `apt-get download syslog-ng-core` + `dpkg-deb -x` into CACHE once. */
export function loggen() {
  const dir = join(CACHE, "syslog-ng");
  const root = join(dir, "root");
  const bin = join(root, "usr/bin/loggen");
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    if (!readdirSync(dir).some((f) => f.startsWith("syslog-ng-core_") && f.endsWith(".deb")))
      execFileSync("apt-get", ["download", "syslog-ng-core"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    const deb = readdirSync(dir).find((f) => f.startsWith("syslog-ng-core_") && f.endsWith(".deb"));
    execFileSync("dpkg-deb", ["-x", join(dir, deb), root]);
  }
  return { bin, env: { ...process.env, SYSLOGNG_PREFIX: join(root, "usr"), LD_LIBRARY_PATH: join(root, "usr/lib/syslog-ng") } };
}

/**
 * Runs loggen: `proto` udp (-D, RFC 5424 without the octet prefix: -P -F), tcp (-S) or tls (-U), both RFC 5424
 * octet-counted (-P); 200-byte messages; `perConn` messages per connection at `ratePerConn` msg/s each (0 = as fast as
 * it can) over `conns` connections. Resolves with what loggen says it sent (its summary line) and the wall time.
 */
export async function runLoggen({ proto, port, perConn, ratePerConn, conns = 1, maxSecs = 600 }) {
  const { bin, env } = loggen();
  const args = [proto === "udp" ? "-D" : proto === "tcp" ? "-S" : "-U", "-P", "-s", "200"];
  if (proto === "udp") args.push("-F");
  args.push("--active-connections", String(conns), "-n", String(perConn), "-I", String(maxSecs));
  // loggen paces at 1000 msg/s per connection unless told: "as fast as it can" is a rate it cannot reach
  args.push("-r", String(ratePerConn > 0 ? ratePerConn : 100000000));
  args.push("127.0.0.1", String(port));
  const t0 = performance.now();
  const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (out += c));
  const cpu = { pid: child.pid, secs: 0 };
  const poll = setInterval(() => (cpu.secs = procCpuSecs(child.pid) || cpu.secs), 200);
  await waitExit(child);
  clearInterval(poll);
  const secs = (performance.now() - t0) / 1000;
  // "average rate = 99989.21 msg/sec, count=500000, time=5.000, (average) msg size=200, bandwidth=19529.14 kB/sec"
  const m = /average rate = ([\d.]+) msg\/sec, count=(\d+), time=([\d.]+)/.exec(out);
  const errors = (out.match(/error sending/g) ?? []).length;
  if (!m) throw new Error(`loggen ${args.join(" ")} printed no summary (exit ${child.exitCode}):\n${out.slice(-2000)}`);
  return { sent: Number(m[2]), rate: Number(m[1]), loggenSecs: Number(m[3]), secs, errors, cpuSecs: cpu.secs, args: args.join(" ") };
}

// ---- TLS material for rsyslog (openssl CLI) -----------------------------------------------------------------------

/** A self-signed CN=localhost certificate and key (used as its own CA) made once with openssl in CACHE/tls. */
export function tlsPair() {
  const dir = join(CACHE, "tls");
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  if (!existsSync(cert) || !existsSync(key)) {
    mkdirSync(dir, { recursive: true });
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=localhost",
      "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert,
    ], { stdio: ["ignore", "ignore", "pipe"] }); // prettier-ignore
  }
  return { cert, key };
}

// ---- rsyslog collector ---------------------------------------------------------------------------------------------

/**
 * A private rsyslogd (`-n -f conf -i pidfile`, never the system one): imudp (2 threads, 8 MiB receive buffer),
 * imtcp, and imtcp over TLS (gtls, anonymous), one ruleset with a LinkedList queue writing one parsed line per
 * message into one file with asynchronous omfile. `count()` = lines written so far.
 */
export async function startRsyslog() {
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-rsyslog-"));
  const [udp, tcp, tls] = [await freePort(), await freePort(), await freePort()];
  const { cert, key } = tlsPair();
  const file = join(dir, "received.log");
  mkdirSync(join(dir, "work"));
  const conf = join(dir, "rsyslog.conf");
  writeFileSync(
    conf,
    `global(workDirectory="${dir}/work" maxMessageSize="64k"
       defaultNetstreamDriverCAFile="${cert}" defaultNetstreamDriverCertFile="${cert}" defaultNetstreamDriverKeyFile="${key}")
module(load="imudp" threads="2" batchSize="128")
module(load="imtcp" maxSessions="2000")
input(type="imudp" name="udp" address="127.0.0.1" port="${udp}" ruleset="collect" rcvbufSize="${RECEIVE_BUFFER_BYTES >> 20}m")
input(type="imtcp" name="tcp" address="127.0.0.1" port="${tcp}" ruleset="collect")
input(type="imtcp" name="tls" address="127.0.0.1" port="${tls}" ruleset="collect"
      streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
template(name="parsed" type="string"
  string="%fromhost-ip% [%inputname%] <%pri%> ver=%protocol-version% ts=%timereported:::date-rfc3339% host=%hostname% app=%app-name% procid=%procid% msgid=%msgid% sd=%structured-data% msg=%msg%\\n")
ruleset(name="collect" queue.type="LinkedList" queue.size="200000" queue.dequeueBatchSize="1024") {
  action(type="omfile" file="${file}" template="parsed" asyncWriting="on" ioBufferSize="512k" flushInterval="1" flushOnTXEnd="off")
}
`,
  );
  execFileSync("rsyslogd", ["-N1", "-f", conf], { stdio: ["ignore", "ignore", "pipe"] });
  const child = spawn("rsyslogd", ["-n", "-f", conf, "-i", join(dir, "rsyslogd.pid")], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  await waitListening(async () => udpBound(udp) && (await tcpOpen(tcp)) && (await tcpOpen(tls)), `rsyslogd (${err.slice(-500)})`);
  const count = lineCounter(file);
  return {
    pid: child.pid,
    ports: { udp, tcp, tls },
    file,
    count,
    cpuSecs: () => procCpuSecs(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await waitExit(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private rsyslogd relay: imudp on a free port, every message forwarded as received (%rawmsg%) by omfwd over UDP. */
export async function startRelay(targetPort) {
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-relay-"));
  mkdirSync(join(dir, "work"));
  const port = await freePort();
  const conf = join(dir, "rsyslog.conf");
  writeFileSync(
    conf,
    `global(workDirectory="${dir}/work" maxMessageSize="64k" parser.escapeControlCharactersOnReceive="off")
module(load="imudp" threads="2" batchSize="128")
input(type="imudp" address="127.0.0.1" port="${port}" ruleset="relay" rcvbufSize="${RECEIVE_BUFFER_BYTES >> 20}m")
template(name="raw" type="string" string="%rawmsg%")
ruleset(name="relay" queue.type="LinkedList" queue.size="200000" queue.dequeueBatchSize="1024") {
  action(type="omfwd" target="127.0.0.1" port="${targetPort}" protocol="udp" template="raw")
}
`,
  );
  const child = spawn("rsyslogd", ["-n", "-f", conf, "-i", join(dir, "rsyslogd.pid")], { stdio: ["ignore", "ignore", "pipe"] });
  await sleep(1000);
  return {
    port,
    cpuSecs: () => procCpuSecs(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- rsyslog storing into PostgreSQL (ompgsql) ---------------------------------------------------------------------

/** Debian's schema for rsyslog-pgsql (tables SystemEvents and SystemEventsProperties), as dbconfig-common would load it. */
export const OMPGSQL_SCHEMA = "/usr/share/dbconfig-common/data/rsyslog-pgsql/install/pgsql";
/** rsyslog's PostgreSQL output module, from Debian's rsyslog-pgsql (test/peers.json). */
export const OMPGSQL_MODULE = "/usr/lib/x86_64-linux-gnu/rsyslog/ompgsql.so";

/**
 * rsyslog's own "parsed and stored" path, on the PostgreSQL server at `adminUrl` (a superuser's URL: the bench passes
 * the kernel's embedded server): creates the role `rsyslog` (a random password: the server asks scram-sha-256 of every
 * TCP client), its database `Syslog` and Debian's SystemEvents table in it, then starts a private rsyslogd (`-n -f
 * conf -i pidfile`): imudp (2 threads, 8 MiB receive buffer) → a Direct ruleset → ompgsql (one INSERT per message, each
 * batch in one transaction) behind a LinkedList action queue of `queueSize` with `workers` worker threads dequeuing
 * `batch` messages at a time, discarding at once when full (timeoutEnqueue 0), retrying the database forever; impstats
 * writes the queue's counters every second. `progress()` = max(id) (cheap, for waiting until it stops growing),
 * `rowsAfter(id)` = rows stored with a larger id (exact), `queueStats()` = the action queue's last impstats counters.
 */
export async function startOmpgsql({ adminUrl, workers = 2, batch = 1024, queueSize = 200000 }) {
  if (!existsSync(OMPGSQL_MODULE) || !existsSync(OMPGSQL_SCHEMA))
    throw new Error(`${OMPGSQL_MODULE} or ${OMPGSQL_SCHEMA} is missing: apt-get install -y rsyslog-pgsql (test/peers.json)`);
  const password = randomBytes(12).toString("hex");
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE rsyslog LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE "Syslog" OWNER rsyslog`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = "/Syslog";
  const owner = new URL(url);
  owner.username = "rsyslog";
  owner.password = password;
  const setup = new pg.Client({ connectionString: owner.toString() });
  await setup.connect();
  try {
    await setup.query(readFileSync(OMPGSQL_SCHEMA, "utf8")); // as dbconfig-common does: the tables belong to the role
  } finally {
    await setup.end();
  }
  const db = new pg.Pool({ connectionString: url.toString(), max: 1 });

  const dir = mkdtempSync(join(tmpdir(), "nms-bench-ompgsql-"));
  mkdirSync(join(dir, "work"));
  const port = await freePort();
  const stats = join(dir, "impstats.json");
  const conf = join(dir, "rsyslog.conf");
  writeFileSync(
    conf,
    `global(workDirectory="${dir}/work" maxMessageSize="64k")
module(load="impstats" interval="1" format="json" log.syslog="off" log.file="${stats}" resetCounters="off")
module(load="imudp" threads="2" batchSize="128")
module(load="ompgsql")
input(type="imudp" address="127.0.0.1" port="${port}" ruleset="db" rcvbufSize="${RECEIVE_BUFFER_BYTES >> 20}m")
template(name="pgsql" type="string" option.stdsql="on"
  string="insert into SystemEvents (Message, Facility, FromHost, Priority, DeviceReportedTime, ReceivedAt, InfoUnitID, SysLogTag) values ('%msg%', %syslogfacility%, '%HOSTNAME%', %syslogpriority%, '%timereported:::date-pgsql%', '%timegenerated:::date-pgsql%', %iut%, '%syslogtag%')")
ruleset(name="db" queue.type="Direct") {
  action(name="pgsql" type="ompgsql" server="${url.hostname}" serverport="${url.port}" db="Syslog" user="rsyslog" pass="${password}" template="pgsql"
         queue.type="LinkedList" queue.size="${queueSize}" queue.dequeueBatchSize="${batch}" queue.workerThreads="${workers}"
         queue.timeoutEnqueue="0" action.resumeRetryCount="-1")
}
`,
  );
  execFileSync("rsyslogd", ["-N1", "-f", conf], { stdio: ["ignore", "ignore", "pipe"] });
  const child = spawn("rsyslogd", ["-n", "-f", conf, "-i", join(dir, "rsyslogd.pid")], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  await waitListening(async () => udpBound(port), `rsyslogd with ompgsql (${err.slice(-500)})`);
  const one = async (sql, params) => Number((await db.query(sql, params)).rows[0].n ?? 0);
  return {
    pid: child.pid,
    port,
    conf: { workers, batch, queueSize },
    progress: () => one("SELECT coalesce(max(id), 0) AS n FROM systemevents"),
    rowsAfter: (id) => one("SELECT count(*) AS n FROM systemevents WHERE id > $1", [id]),
    sample: async () =>
      (await db.query("SELECT fromhost, syslogtag, facility, priority, length(message) AS len FROM systemevents ORDER BY id DESC LIMIT 1")).rows[0],
    /** The action queue's counters at impstats' last report: {size, enqueued, full, "discarded.full", maxqsize, ...}. */
    queueStats() {
      if (!existsSync(stats)) return {};
      const lines = readFileSync(stats, "utf8").trimEnd().split("\n");
      for (let i = lines.length - 1; i >= 0; i--) {
        const j = lines[i].indexOf("{");
        if (j < 0) continue;
        try {
          const s = JSON.parse(lines[i].slice(j));
          if (s.name === "pgsql queue") return s;
        } catch {
          // a line being written
        }
      }
      return {};
    },
    errors: () => err,
    cpuSecs: () => procCpuSecs(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await waitExit(child);
      await db.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- snmptrapd -----------------------------------------------------------------------------------------------------

const SNMP_ENV = { MIBS: ":", MIBDIRS: "/nonexistent" };

/** A private snmptrapd (`-f -C -c conf -Lf file -n -On -t`): community public logged, one line per trap; `count()` = lines. */
export async function startSnmptrapd() {
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-snmptrapd-"));
  const port = await freePort();
  const conf = join(dir, "snmptrapd.conf");
  const file = join(dir, "traps.log");
  writeFileSync(
    conf,
    `authCommunity log public
format1 TRAPv1 from=%b sec=%P enterprise=%N generic=%w specific=%q vars=%v\\n
format2 TRAPv2 from=%b sec=%P vars=%v\\n
`,
  );
  mkdirSync(join(dir, "persist"));
  const child = spawn("snmptrapd", ["-f", "-C", "-c", conf, "-Lf", file, "-n", "-On", "-t", "-p", join(dir, "snmptrapd.pid"), `udp:127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...SNMP_ENV, SNMP_PERSISTENT_DIR: join(dir, "persist") },
  });
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  await waitListening(async () => udpBound(port), `snmptrapd (${err.slice(-500)})`);
  const lines = lineCounter(file);
  // -Lf also logs snmptrapd's own start line ("NET-SNMP version ..."): only lines that start with TRAP are traps.
  await sleep(300);
  const base = lines();
  return {
    pid: child.pid,
    port,
    file,
    count: () => lines() - base,
    cpuSecs: () => procCpuSecs(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await waitExit(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One genuine SNMPv2c linkDown trap datagram (1.3.6.1.6.3.1.1.5.3 with ifIndex, ifAdminStatus, ifOperStatus, ifName),
 * as Net-SNMP's snmptrap encodes it: captured on a throw-away UDP socket of this process.
 */
export async function captureTrap(community = "public") {
  const sock = createSocket("udp4");
  await new Promise((r) => sock.bind(0, "127.0.0.1", r));
  const got = new Promise((resolve) => sock.once("message", (msg) => resolve(msg)));
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-snmptrap-"));
  try {
    // prettier-ignore
    execFileSync("snmptrap", [
      "-v2c", "-c", community, `127.0.0.1:${sock.address().port}`, "", "1.3.6.1.6.3.1.1.5.3",
      "1.3.6.1.2.1.2.2.1.1.7", "i", "7", "1.3.6.1.2.1.2.2.1.7.7", "i", "1", "1.3.6.1.2.1.2.2.1.8.7", "i", "2",
      "1.3.6.1.2.1.31.1.1.1.1.7", "s", "GigabitEthernet0/7",
    ], { env: { ...process.env, ...SNMP_ENV, SNMP_PERSISTENT_DIR: dir }, stdio: ["ignore", "ignore", "pipe"], timeout: 10000 });
    const msg = await Promise.race([got, sleep(5000).then(() => null)]);
    if (!msg) throw new Error("snmptrap sent nothing");
    return msg;
  } finally {
    sock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- paced UDP replay (child process) ------------------------------------------------------------------------------

/**
 * Sends `count` copies of `payload` to 127.0.0.1:port at `rate` datagrams/s from a child Node process (several
 * sockets; every ~1 ms tick it sends what is due by the clock, so the pace holds to within a tick). Resolves with
 * {sent, errors, secs, rate, cpuSecs}.
 */
export async function replayUdp({ payload, port, count, rate, sockets = 4 }) {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), "replay", JSON.stringify({ payload: payload.toString("base64"), port, count, rate, sockets })],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  let cpuSecs = 0;
  const poll = setInterval(() => (cpuSecs = procCpuSecs(child.pid) || cpuSecs), 200);
  await waitExit(child);
  clearInterval(poll);
  const r = JSON.parse(out.trim().split("\n").pop());
  return { ...r, cpuSecs };
}

async function replayMain(spec) {
  const { port, count, rate, sockets } = spec;
  const payload = Buffer.from(spec.payload, "base64");
  const socks = await Promise.all(
    Array.from({ length: sockets }, async () => {
      const s = createSocket("udp4");
      await new Promise((r) => s.bind(0, "127.0.0.1", r));
      s.setSendBufferSize(4 << 20);
      s.connect(port, "127.0.0.1");
      await new Promise((r) => s.once("connect", r));
      s.on("error", () => undefined);
      return s;
    }),
  );
  let sent = 0;
  let errors = 0;
  let done = 0;
  const t0 = performance.now();
  await new Promise((resolve) => {
    const onSent = (err) => {
      if (err) errors++;
      if (++done === count) resolve();
    };
    const tick = () => {
      const due = Math.min(count, Math.floor(((performance.now() - t0) / 1000) * rate));
      while (sent < due) socks[sent++ % sockets].send(payload, onSent);
      if (sent < count) setTimeout(tick, 1);
    };
    tick();
  });
  const secs = (performance.now() - t0) / 1000;
  for (const s of socks) s.close();
  console.log(JSON.stringify({ sent, errors, secs, rate: Math.round(sent / secs) }));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "replay") await replayMain(JSON.parse(process.argv[3]));

// ---- the service under test: kernel, node, rules, counts -----------------------------------------------------------

/** Pids of this process's descendants named `comm` (e.g. "postgres": the embedded PostgreSQL's processes). */
export function descendants(comm, root = process.pid) {
  const parent = new Map();
  const name = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, "utf8");
      name.set(Number(d), f.slice(f.indexOf("(") + 1, f.lastIndexOf(")")));
      parent.set(Number(d), Number(f.slice(f.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const out = [];
  for (const [pid, n] of name) {
    if (n !== comm) continue;
    for (let p = parent.get(pid); p; p = parent.get(p))
      if (p === root) {
        out.push(pid);
        break;
      }
  }
  return out;
}

/** CPU seconds used so far by this process's descendants named `comm`. */
export const descendantsCpuSecs = (comm) => descendants(comm).reduce((s, pid) => s + procCpuSecs(pid), 0);

/** RSS (MB) summed over this process's descendants named `comm` (shared memory counted once per process: an upper bound). */
export function descendantsRssMb(comm) {
  let kb = 0;
  for (const pid of descendants(comm)) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024);
}

/**
 * The 100 event rules of the benchmarks: 80 that match nothing the benchmarks send (44 substring, 36 regex), 13 trap_oid
 * rules (10 on other OIDs, 3 matching the replayed linkDown trap) and 7 that match every loggen message (4 substring,
 * 3 regex). min_count 100000 within 1 s: matching rules count every message (their window kept) and, below 100k
 * messages a second, never fire.
 */
export function benchRules() {
  const rules = [];
  const add = (pattern, match_kind) =>
    rules.push({ name: `bench ${rules.length + 1} ${match_kind}`, pattern, match_kind, severity: "warning", min_count: 100000, window_secs: 1 });
  for (let i = 0; i < 44; i++) add(`Interface Gi${i % 4}/0/${i} changed state to down`, "substring");
  for (let i = 0; i < 36; i++) add(`%SYS-${i % 7}-CONFIG_I: Configured from (console|vty${i}) by [a-z]+ on port ${i}`, "regex");
  for (let i = 0; i < 10; i++) add(`1.3.6.1.4.1.9.9.${41 + i}.2`, "trap_oid");
  for (const oid of ["1.3.6.1.6.3.1.1.5.3", "1.3.6.1.6.3.1.1.5", "1.3.6.1.6.3.1.1"]) add(oid, "trap_oid");
  for (const s of ["PADDPADD", "runid:", "seq: 0", "thread: "]) add(s, "substring");
  for (const r of ["seq: \\d{10}, thread", "thread: \\d{4}", "stamp: \\d{4}-\\d\\d-\\d\\dT"]) add(r, "regex");
  return rules;
}

/**
 * Starts the built kernel in this process (dist/, embedded PostgreSQL in a fresh data dir, as bench/notify-throughput.mjs
 * does) with inventory, polling (no embedded poller), alerts and events (and, asked, flows without its listener and
 * forwarding), every listener on a free loopback port; makes
 * the node 127.0.0.1 (so events are attributed) and the 100 rules. Returns helpers around it.
 */
export async function startEventsKernel(root, overrides = {}, { forwarding = false, forwardingConfig = {} } = {}) {
  const dist = join(root, "dist");
  if (!existsSync(join(dist, "plugins/events/index.js")))
    throw new Error("dist/plugins/events is missing: run `npm run build` first (npm run bench:events-* does).");
  const imp = (p) => import(new URL(`file://${join(dist, p)}`).href);
  const { startTestKernel } = await imp("core/testing/index.js");
  const { inventoryPlugin } = await imp("plugins/inventory/index.js");
  const { pollingPlugin } = await imp("plugins/polling/index.js");
  const { alertsPlugin } = await imp("plugins/alerts/index.js");
  const { eventsPlugin } = await imp("plugins/events/index.js");
  const { EventPipeline } = await imp("plugins/events/services/EventPipeline.js");
  // With `forwarding`, the flows (no listener) and forwarding plugins too: the tee of bench/forwarding-relay.mjs.
  const extra = forwarding ? [(await imp("plugins/flows/index.js")).flowsPlugin, (await imp("plugins/forwarding/index.js")).forwardingPlugin] : [];
  const k = await startTestKernel({
    builtinPlugins: false,
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, ...extra],
    overrides: {
      logLevel: "error",
      jobs: { drainMs: 10000, processEvery: "5 seconds", lockLifetimeMs: 600000 },
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: {
          syslog: { udp: 0, tcp: 0, tls: 0, bindAddress: "127.0.0.1", udpReceiveBufferBytes: RECEIVE_BUFFER_BYTES },
          traps: { udp: 0, bindAddress: "127.0.0.1", communities: ["public"] },
          // BENCH_PARSER_NICE: the ingest parser threads' niceness (ingest.parserNice) for a comparison run.
          // BENCH_UDP_SOCKETS: UDP sockets per ingest worker (ingest.udpSocketsPerWorker).
          ...(process.env.BENCH_PARSER_NICE || process.env.BENCH_UDP_SOCKETS
            ? {
                ingest: {
                  ...(process.env.BENCH_PARSER_NICE ? { parserNice: Number(process.env.BENCH_PARSER_NICE) } : {}),
                  ...(process.env.BENCH_UDP_SOCKETS ? { udpSocketsPerWorker: Number(process.env.BENCH_UDP_SOCKETS) } : {}),
                },
              }
            : {}),
          ...overrides,
        },
        ...(forwarding ? { flows: { udp: null }, forwarding: forwardingConfig } : {}),
      },
    },
  });
  const api = async (method, path, body) => {
    const res = await k.request(method, path, { body });
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  const node = await api("POST", "/nodes", { name: "bench-loopback", address: "127.0.0.1" });
  for (const r of benchRules()) await api("POST", "/event-rules", r);
  const pipeline = k.context("events").get(EventPipeline);
  const listeners = async () => Object.fromEntries((await api("GET", "/listeners")).listeners.map((l) => [l.name, l]));
  const ports = Object.fromEntries(Object.entries(await listeners()).map(([n, l]) => [n, l.port]));
  /** Events of `kind` stored with received_at ≥ `sinceIso` (GET /events/stats?group_by=kind). */
  const stored = async (kind, sinceIso) => {
    const rows = await api("GET", `/events/stats?group_by=kind&start=${encodeURIComponent(sinceIso)}`);
    return rows.filter((r) => r.key === kind).reduce((n, r) => n + Number(r.count), 0);
  };
  return { k, api, node, pipeline, listeners, ports, stored, stop: () => k.stop() };
}

/** The summed counters {received, dropped, malformed} of the listeners named `name` (a protocol may bind more than one socket). */
export async function listenerCounters(ev, name) {
  const res = await ev.api("GET", "/listeners");
  const c = { received: 0, dropped: 0, malformed: 0 };
  for (const l of res.listeners.filter((x) => x.name === name)) for (const key of Object.keys(c)) c[key] += Number(l.counters?.[key] ?? 0);
  return c;
}

// ---- CPU profile of a step (BENCH_CPU_PROF=dir) ---------------------------------------------------------------------

/** Starts the V8 CPU profiler of this process (the kernel runs here); `stop(file)` writes the .cpuprofile and returns a summary. */
export async function startProfile() {
  const { Session } = await import("node:inspector/promises");
  const s = new Session();
  s.connect();
  await s.post("Profiler.enable");
  await s.post("Profiler.start");
  return {
    async stop(file) {
      const { profile } = await s.post("Profiler.stop");
      s.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      return summarizeProfile(profile);
    },
  };
}

/** Self time of the top functions and inclusive time of the top frames, as % of the non-idle samples. */
export function summarizeProfile(profile, top = 12) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const dt = new Map();
  profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const label = (n) =>
    `${n.callFrame.functionName || "(anon)"}@${n.callFrame.url.replace(/.*\/(dist|node_modules)\//, "").replace(/^node:/, "")}:${n.callFrame.lineNumber + 1}`;
  const self = new Map();
  const incl = new Map();
  let busy = 0;
  let idle = 0;
  for (const [id, t] of dt) {
    const n = byId.get(id);
    if (n.callFrame.functionName === "(idle)") {
      idle += t;
      continue;
    }
    busy += t;
    self.set(label(n), (self.get(label(n)) ?? 0) + t);
    const seen = new Set();
    for (let x = id; x; x = parent.get(x)) {
      const l = label(byId.get(x));
      if (seen.has(l) || l.startsWith("(root)")) continue;
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + t);
    }
  }
  const fmt = (m) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, t]) => `${((t / busy) * 100).toFixed(1)}% ${k}`);
  return { busyPct: Math.round((busy / (busy + idle)) * 100), self: fmt(self), inclusive: fmt(incl) };
}
