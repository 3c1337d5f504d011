/**
 * Real SNMP agents on loopback for tests: snmpsim (simulated devices from .snmprec recordings
 * written here at run time, plus copies of the real walks shipped with Debian's snmpsim) and
 * Net-SNMP's snmpd with a private configuration. Every agent listens on 127.0.0.1 on a free UDP
 * port, runs from a temporary folder, and is stopped by its pid (stopAllSnmpAgents() stops any
 * left over; call it in afterAll).
 *
 * Needs the Debian packages snmpsim and snmpd (CI installs them).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import snmp from "net-snmp";

export const LOOPBACK = "127.0.0.1";
const SNMPSIM_EXAMPLES = "/usr/share/doc/snmpsim/examples/data";

/** A free UDP port on loopback: bind port 0, read what the kernel chose, release it. */
export function freeUdpPort(address = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createSocket("udp4");
    s.once("error", reject);
    s.bind(0, address, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const running = new Set<ChildProcess>();
const agents = new Set<SnmpAgentHandle>();

/** Stops every agent this module started and is still running, and removes its folder (afterAll safety net). */
export async function stopAllSnmpAgents(): Promise<void> {
  await Promise.all([...agents].map((a) => a.stop()));
  await Promise.all([...running].map((child) => stopChild(child)));
}

process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    running.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
  running.delete(child);
}

function startChild(cmd: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const chunks: Buffer[] = [];
  const keep = (b: Buffer) => {
    chunks.push(b);
    if (chunks.length > 200) chunks.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.once("exit", () => {
    running.delete(child);
    try {
      writeFileSync(logFile, Buffer.concat(chunks));
    } catch {
      // the temp folder may be gone already
    }
  });
  running.add(child);
  return child;
}

/** Waits until a v2c GET of sysUpTime with `community` answers on the port. */
async function waitAnswers(port: number, community: string, deadlineMs: number, child: ChildProcess, what: string, host = LOOPBACK): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} before answering`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = snmp.createSession(host, community, { port, retries: 0, timeout: 300, version: snmp.Version2c });
      s.on("error", () => undefined);
      s.get(["1.3.6.1.2.1.1.3.0"], (err) => {
        s.close();
        resolve(!err);
      });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not answer on udp ${host}:${port} within ${deadlineMs} ms`);
}

// ---- recordings ---------------------------------------------------------------------------------

/** One line of an .snmprec file: OID, snmpsim tag (2 Integer, 4 OctetString, 6 OID, 65 Counter32, 66 Gauge32, 67 TimeTicks, 70 Counter64; ":numeric" = moving value), value. */
export type SnmprecRow = [oid: string, tag: string, value: string | number];

export interface SyntheticInterface {
  name: string;
  alias?: string;
  /** Bytes per second ifInOctets/ifHCInOctets grow by. */
  inBytesPerSec: number;
  outBytesPerSec: number;
  /** ifHighSpeed, Mbit/s (ifSpeed is derived, capped at 2^32 - 1). */
  speedMbps: number;
  up?: boolean;
  /** ifInErrors per second (default 0: static). */
  inErrorsPerSec?: number;
  /** Initial value of the 32-bit ifInOctets (to start it close to 2^32). */
  in32Initial?: number;
  /** Static ifHCInOctets / ifHCOutOctets values (exact decimal text) instead of moving ones. */
  hcStatic?: [inOctets: string, outOctets: string];
}

export interface SyntheticDevice {
  /** v1/v2c community selecting the device (= recording file name). */
  community: string;
  sysName: string;
  sysDescr?: string;
  sysObjectId?: string;
  interfaces: SyntheticInterface[];
  /** Write ifXTable ifHC* octet counters (64-bit); false makes a 32-bit-only device. */
  hc?: boolean;
  /** hrProcessorLoad rows (index → static load %) and hrStorage rows. */
  hostResources?: boolean;
  /** More rows (templates, exactness cases). */
  extra?: SnmprecRow[];
}

export const HR_CPUS: [index: number, load: number][] = [
  [196608, 17],
  [196609, 42],
];
export const HR_STORAGE: [index: number, descr: string, units: number, size: number, used: number][] = [
  [1, "Physical memory", 1024, 8388608, 2097152],
  [3, "Virtual memory", 1024, 10485760, 5242880],
  [31, "/", 4096, 26214400, 6553600],
];

/** The .snmprec text of a synthetic device (rows sorted by OID, as snmpsim requires). */
export function syntheticRecording(d: SyntheticDevice): string {
  const rows: SnmprecRow[] = [];
  const add = (oid: string, tag: string, value: string | number) => rows.push([oid, tag, value]);
  const SYS = "1.3.6.1.2.1.1";
  add(`${SYS}.1.0`, "4", d.sysDescr ?? `Synthetic ${d.sysName} (${d.interfaces.length} interfaces)`);
  add(`${SYS}.2.0`, "6", d.sysObjectId ?? "1.3.6.1.4.1.8072.3.2.10");
  add(`${SYS}.3.0`, "67:numeric", "rate=100,initial=0"); // sysUpTime restarts with snmpsimd, like a reboot
  add(`${SYS}.4.0`, "4", "tests@localhost");
  add(`${SYS}.5.0`, "4", d.sysName);
  add(`${SYS}.6.0`, "4", "loopback");
  add("1.3.6.1.2.1.2.1.0", "2", d.interfaces.length);
  const IF = "1.3.6.1.2.1.2.2.1";
  const IFX = "1.3.6.1.2.1.31.1.1.1";
  d.interfaces.forEach((it, n) => {
    const i = n + 1;
    add(`${IF}.1.${i}`, "2", i);
    add(`${IF}.2.${i}`, "4", it.name);
    add(`${IF}.3.${i}`, "2", 6);
    add(`${IF}.5.${i}`, "66", Math.min(it.speedMbps * 1_000_000, 4294967295));
    add(`${IF}.7.${i}`, "2", 1);
    add(`${IF}.8.${i}`, "2", it.up === false ? 2 : 1);
    add(`${IF}.10.${i}`, "65:numeric", `rate=${it.inBytesPerSec},initial=${it.in32Initial ?? 1000 * i},wrap=1`);
    add(`${IF}.13.${i}`, "65", 0);
    add(`${IF}.14.${i}`, it.inErrorsPerSec ? "65:numeric" : "65", it.inErrorsPerSec ? `rate=${it.inErrorsPerSec},wrap=1` : 0);
    add(`${IF}.16.${i}`, "65:numeric", `rate=${it.outBytesPerSec},initial=${500 * i},wrap=1`);
    add(`${IF}.19.${i}`, "65", 0);
    add(`${IF}.20.${i}`, "65", 0);
    add(`${IFX}.1.${i}`, "4", it.name.replace("GigabitEthernet", "Gi"));
    if (it.hcStatic) {
      add(`${IFX}.6.${i}`, "70", it.hcStatic[0]);
      add(`${IFX}.10.${i}`, "70", it.hcStatic[1]);
    } else if (d.hc !== false) {
      add(`${IFX}.6.${i}`, "70:numeric", `rate=${it.inBytesPerSec},initial=${5_000_000_000 + i}`);
      add(`${IFX}.10.${i}`, "70:numeric", `rate=${it.outBytesPerSec},initial=${7_000_000_000 + i}`);
    }
    add(`${IFX}.15.${i}`, "66", it.speedMbps);
    add(`${IFX}.18.${i}`, "4", it.alias ?? `port ${i} of ${d.sysName}`);
  });
  if (d.hostResources !== false) {
    const HR = "1.3.6.1.2.1.25";
    add(`${HR}.1.1.0`, "67:numeric", "rate=100,initial=0");
    for (const [idx, descr, units, size, used] of HR_STORAGE) {
      add(`${HR}.2.3.1.1.${idx}`, "2", idx);
      add(`${HR}.2.3.1.3.${idx}`, "4", descr);
      add(`${HR}.2.3.1.4.${idx}`, "2", units);
      add(`${HR}.2.3.1.5.${idx}`, "2", size);
      add(`${HR}.2.3.1.6.${idx}`, "2", used);
    }
    for (const [idx] of HR_CPUS) add(`${HR}.3.2.1.2.${idx}`, "6", "1.3.6.1.2.1.25.3.1.3");
    for (const [idx, load] of HR_CPUS) add(`${HR}.3.3.1.2.${idx}`, "2", load);
  }
  for (const row of d.extra ?? []) rows.push(row);
  const key = (oid: string) => oid.split(".").map(Number);
  rows.sort((a, b) => {
    const x = key(a[0]);
    const y = key(b[0]);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  });
  return rows.map(([oid, tag, value]) => `${oid}|${tag}|${value}\n`).join("");
}

// ---- snmpsim ------------------------------------------------------------------------------------

export interface V3User {
  user: string;
  /** snmpsimd names: MD5, SHA, SHA224, SHA256, SHA384, SHA512. */
  authProto: string;
  authKey: string;
  /** snmpsimd names: DES, AES, AES192, AES256 (Reeder), AES192BLMT, AES256BLMT. */
  privProto: string;
  privKey: string;
}

export interface SnmpsimOptions {
  devices: SyntheticDevice[];
  /** Also serve copies of snmpsim's shipped real walks: community "linux" (Linux host) and "cisco16" (Cisco C3750). */
  shippedRecordings?: boolean;
  /** The device a v3 request without a context name reaches (default: the first device). */
  v3Default?: string;
  v3?: V3User;
  startTimeoutMs?: number;
}

export interface SnmpAgentHandle {
  host: string;
  port: number;
  /** Folder with the agent's data, configuration and log. */
  dir: string;
  stop(): Promise<void>;
}

export interface SnmpsimAgent extends SnmpAgentHandle {
  v3: V3User;
  /** Communities of the shipped real walks that were found and copied ("linux", "cisco16"). */
  shipped: string[];
  /** Stops snmpsimd and starts it again on the same port: a device reboot (sysUpTime and counters start over). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the agent stops answering (its port stays bound) and resumes. */
  pause(): void;
  resume(): void;
}

export const DEFAULT_SIM_V3: V3User = { user: "simuser", authProto: "SHA", authKey: "simauthpass", privProto: "AES", privKey: "simprivpass" };

/** A program from PATH, else from the sbin folders a non-root PATH often lacks (snmpd is in /usr/sbin). */
function program(name: string): string {
  for (const dir of [...(process.env.PATH ?? "").split(":").filter(Boolean), "/usr/sbin", "/sbin", "/usr/bin"]) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  throw new Error(`${name} not found: install the Debian package ${name === "snmpsimd" ? "snmpsim" : name}`);
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** Recursively hands a folder to nobody:nogroup (snmpsimd refuses to run as root and drops to them). */
function handToNobody(path: string): void {
  const uid = 65534;
  const gid = 65534;
  chownSync(path, uid, gid);
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) handToNobody(join(path, e));
}

function copyShipped(gz: string, to: string): boolean {
  if (!existsSync(gz)) return false;
  writeFileSync(to, gunzipSync(readFileSync(gz)));
  return true;
}

/** Starts snmpsimd with the given synthetic devices (one community each) on a free loopback port. */
export async function startSnmpsim(opts: SnmpsimOptions): Promise<SnmpsimAgent> {
  const dir = mkdtempSync(join(tmpdir(), "nms-snmpsim-"));
  const data = join(dir, "data");
  const cache = join(dir, "cache");
  mkdirSync(data);
  mkdirSync(cache);
  for (const d of opts.devices) writeFileSync(join(data, `${d.community}.snmprec`), syntheticRecording(d));
  const shipped: string[] = [];
  if (opts.shippedRecordings) {
    if (copyShipped(join(SNMPSIM_EXAMPLES, "recorded/linux-full-walk.snmprec.gz"), join(data, "linux.snmprec"))) shipped.push("linux");
    if (copyShipped(join(SNMPSIM_EXAMPLES, "cisco_16_switch.snmprec.gz"), join(data, "cisco16.snmprec"))) shipped.push("cisco16");
  }
  // v3 without a context name: snmpsim falls back to the file named after the transport ID of
  // the endpoint (the first endpoint is 1.3.6.1.6.1.1.0).
  const v3Default = opts.v3Default ?? opts.devices[0]?.community;
  if (v3Default) symlinkSync(`${v3Default}.snmprec`, join(data, "1.3.6.1.6.1.1.0.snmprec"));
  chmodSync(dir, 0o755);
  if (isRoot()) handToNobody(dir);

  const v3 = opts.v3 ?? DEFAULT_SIM_V3;
  const port = await freeUdpPort();
  const args = [
    `--data-dir=${data}`,
    `--cache-dir=${cache}`,
    `--agent-udpv4-endpoint=${LOOPBACK}:${port}`,
    `--v3-user=${v3.user}`,
    `--v3-auth-key=${v3.authKey}`,
    `--v3-auth-proto=${v3.authProto}`,
    `--v3-priv-key=${v3.privKey}`,
    `--v3-priv-proto=${v3.privProto}`,
    "--logging-method=null",
    ...(isRoot() ? ["--process-user=nobody", "--process-group=nogroup"] : []),
  ];
  const community = opts.devices[0]?.community ?? "linux";
  let child: ChildProcess;
  const launch = async () => {
    child = startChild(program("snmpsimd"), args, {}, join(dir, "snmpsimd.log"));
    try {
      await waitAnswers(port, community, opts.startTimeoutMs ?? 60000, child, "snmpsimd");
    } catch (err) {
      await stopChild(child);
      throw new Error(`${(err as Error).message} (log: ${join(dir, "snmpsimd.log")})`);
    }
  };
  await launch();
  const agent: SnmpsimAgent = {
    host: LOOPBACK,
    port,
    dir,
    v3,
    shipped,
    async restart() {
      await stopChild(child);
      await launch();
    },
    pause() {
      child.kill("SIGSTOP");
    },
    resume() {
      child.kill("SIGCONT");
    },
    async stop() {
      agents.delete(agent);
      child.kill("SIGCONT");
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  agents.add(agent);
  return agent;
}

// ---- snmpd --------------------------------------------------------------------------------------

export interface SnmpdUser {
  user: string;
  /** snmpd.conf names: MD5, SHA, SHA-224, SHA-256, SHA-384, SHA-512. */
  auth: string;
  authKey: string;
  /** DES, AES, AES-192, AES-256 (omit for authNoPriv). */
  priv?: string;
  privKey?: string;
}

export interface SnmpdOptions {
  community?: string;
  users?: SnmpdUser[];
  sysName?: string;
  startTimeoutMs?: number;
  /** The loopback address it binds (default 127.0.0.1): another 127.x address gives a device a sweep finds apart from the others. */
  address?: string;
}

export interface SnmpdAgent extends SnmpAgentHandle {
  community: string;
  users: SnmpdUser[];
}

export const DEFAULT_SNMPD_USERS: SnmpdUser[] = [{ user: "peeruser", auth: "SHA", authKey: "peerauthpass", priv: "AES", privKey: "peerprivpass" }];

/**
 * Net-SNMP's snmpd serving this machine's real data, with a private configuration: v1/v2c read-only
 * community from 127.0.0.1, v3 users (authPriv by default), no AgentX master, no SMUX, loopback only.
 */
export async function startSnmpd(opts: SnmpdOptions = {}): Promise<SnmpdAgent> {
  const dir = mkdtempSync(join(tmpdir(), "nms-snmpd-"));
  const persist = join(dir, "persist");
  mkdirSync(persist);
  const community = opts.community ?? "public";
  const users = opts.users ?? DEFAULT_SNMPD_USERS;
  const host = opts.address ?? LOOPBACK;
  const port = await freeUdpPort(host);
  const conf = [
    `agentAddress udp:${host}:${port}`,
    `rocommunity ${community} ${host === LOOPBACK ? LOOPBACK : "127.0.0.0/8"}`,
    ...users.flatMap((u) => [
      `createUser ${u.user} ${u.auth} "${u.authKey}"${u.priv ? ` ${u.priv} "${u.privKey}"` : ""}`,
      `rouser ${u.user} ${u.priv ? "priv" : "auth"}`,
    ]),
    `sysName ${opts.sysName ?? `snmpd-test-${port}`}`,
    "sysLocation loopback",
    "sysContact tests@localhost",
    "master no",
    "dontLogTCPWrappersConnects yes",
    "",
  ].join("\n");
  const confFile = join(dir, "snmpd.conf");
  writeFileSync(confFile, conf);
  const child = startChild(
    program("snmpd"),
    ["-f", "-C", "-c", confFile, "-Lf", join(dir, "snmpd.log"), "-p", join(dir, "snmpd.pid"), "-I", "-smux"],
    { SNMP_PERSISTENT_DIR: persist, MIBS: ":", MIBDIRS: dir, HOME: dir },
    join(dir, "snmpd.out"),
  );
  try {
    await waitAnswers(port, community, opts.startTimeoutMs ?? 20000, child, "snmpd", host);
  } catch (err) {
    await stopChild(child);
    throw new Error(`${(err as Error).message} (log: ${join(dir, "snmpd.log")}, ${join(dir, "snmpd.out")})`);
  }
  const agent: SnmpdAgent = {
    host,
    port,
    dir,
    community,
    users,
    async stop() {
      agents.delete(agent);
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  agents.add(agent);
  return agent;
}
