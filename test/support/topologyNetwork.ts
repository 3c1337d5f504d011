/**
 * A small network for topology tests, served by the real snmpsim: a core, two distribution switches, six access
 * devices, each on its own loopback address (127.0.0.x, one snmpsimd bound to all of them on one port, community =
 * the device's recording), with LLDP-MIB and CISCO-CDP-MIB rows describing their links, and one neighbour that is no
 * node (an IP phone). `lldp` and `cdp` rows are what each device reports; a test rewrites a device's rows and
 * restarts the agent to change what it sees.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import snmp from "net-snmp";
import { freeUdpPort, syntheticRecording, type SnmprecRow } from "./snmpAgents.js";

export interface LldpNeighbor {
  /** Local port number (= ifIndex here). */
  localPort: number;
  chassisMac: string | null;
  portId: string;
  sysName: string | null;
  mgmt: string | null;
}

export interface CdpNeighbor {
  ifIndex: number;
  deviceId: string;
  devicePort: string;
  address: string | null;
  platform?: string;
}

export interface TopoDevice {
  key: string;
  address: string;
  sysName: string;
  /** lldpLocChassisId (12 hex digits) or null: no LLDP agent. */
  chassisMac: string | null;
  ports: number;
  lldp: LldpNeighbor[];
  cdp: CdpNeighbor[];
}

const mac = (n: number) => `0000000000${n.toString(16).padStart(2, "0")}`;
const lldp = (localPort: number, peer: { n: number; sysName: string; port: number }, withMgmt: boolean, viaChassis = true): LldpNeighbor => ({
  localPort,
  chassisMac: viaChassis ? mac(peer.n) : null,
  portId: `Gi0/${peer.port}`,
  sysName: peer.sysName,
  mgmt: withMgmt ? `127.0.0.${peer.n}` : null,
});

/**
 * The test network (what resolves how):
 * core–dist1: both report LLDP with management addresses (address, one link with both ends' interfaces);
 * core–dist2: LLDP without addresses (chassis id); dist1–acc1: CDP device id "acc1.lab.example" (sysName's first
 * label = the node's name); dist1–acc2: CDP both ways with addresses; dist1–acc3: LLDP chassis id; dist2–acc4: CDP
 * address; dist2–acc5: LLDP address; dist2–acc6: LLDP sysName only (acc6 has no LLDP agent); dist2 Gi0/5: an IP
 * phone at 127.0.0.99, no node here.
 */
export function testNetwork(): TopoDevice[] {
  const core = { n: 21, sysName: "core" };
  const dist1 = { n: 22, sysName: "dist1" };
  const dist2 = { n: 23, sysName: "dist2" };
  const acc = (i: number) => ({ n: 30 + i, sysName: `acc${i}` });
  const device = (p: { n: number; sysName: string }, ports: number, extra: Partial<TopoDevice> = {}): TopoDevice => ({
    key: p.sysName,
    address: `127.0.0.${p.n}`,
    sysName: p.sysName,
    chassisMac: mac(p.n),
    ports,
    lldp: [],
    cdp: [],
    ...extra,
  });
  return [
    device(core, 4, { lldp: [lldp(1, { ...dist1, port: 1 }, true), lldp(2, { ...dist2, port: 1 }, false)] }),
    device(dist1, 5, {
      lldp: [lldp(1, { ...core, port: 1 }, true), lldp(4, { ...acc(3), port: 1 }, false)],
      cdp: [
        { ifIndex: 2, deviceId: "acc1.lab.example", devicePort: "GigabitEthernet0/1", address: null },
        { ifIndex: 3, deviceId: "acc2", devicePort: "GigabitEthernet0/1", address: "127.0.0.32" },
      ],
    }),
    device(dist2, 6, {
      lldp: [
        lldp(1, { ...core, port: 2 }, false),
        lldp(3, { ...acc(5), port: 1 }, true),
        { localPort: 4, chassisMac: null, portId: "Gi0/1", sysName: "acc6", mgmt: null },
        { localPort: 5, chassisMac: "aabbcc000099", portId: "port 1", sysName: "ip-phone-99", mgmt: "127.0.0.99" },
      ],
      cdp: [{ ifIndex: 2, deviceId: "SW-ACC4-SERIAL", devicePort: "GigabitEthernet0/1", address: "127.0.0.34" }],
    }),
    device(acc(1), 2),
    device(acc(2), 2, { cdp: [{ ifIndex: 1, deviceId: "dist1", devicePort: "GigabitEthernet0/3", address: "127.0.0.22" }] }),
    device(acc(3), 2),
    device(acc(4), 2),
    device(acc(5), 2),
    device(acc(6), 2, { chassisMac: null }),
  ];
}

const LLDP_LOC = "1.0.8802.1.1.2.1.3";
const LLDP_REM = "1.0.8802.1.1.2.1.4.1.1";
const LLDP_MAN = "1.0.8802.1.1.2.1.4.2.1";
const CDP = "1.3.6.1.4.1.9.9.23.1.2.1.1";

const hexOf = (text: string) => Buffer.from(text, "latin1").toString("hex");
const ipHex = (ip: string) =>
  ip
    .split(".")
    .map((o) => Number(o).toString(16).padStart(2, "0"))
    .join("");

/** The LLDP and CDP rows of a device (added to a synthetic recording's system group and interfaces). */
export function neighborRows(d: TopoDevice): SnmprecRow[] {
  const rows: SnmprecRow[] = [];
  if (d.chassisMac) {
    rows.push([`${LLDP_LOC}.1.0`, "2", 4], [`${LLDP_LOC}.2.0`, "4x", d.chassisMac], [`${LLDP_LOC}.3.0`, "4", d.sysName]);
    for (let p = 1; p <= d.ports; p++) {
      rows.push([`${LLDP_LOC}.7.1.2.${p}`, "2", 5], [`${LLDP_LOC}.7.1.3.${p}`, "4", `Gi0/${p}`], [`${LLDP_LOC}.7.1.4.${p}`, "4", `GigabitEthernet0/${p}`]);
    }
  }
  for (const n of d.lldp) {
    const idx = `0.${n.localPort}.1`;
    if (n.chassisMac) rows.push([`${LLDP_REM}.4.${idx}`, "2", 4], [`${LLDP_REM}.5.${idx}`, "4x", n.chassisMac]);
    else rows.push([`${LLDP_REM}.4.${idx}`, "2", 7], [`${LLDP_REM}.5.${idx}`, "4", ""]);
    rows.push([`${LLDP_REM}.6.${idx}`, "2", 5], [`${LLDP_REM}.7.${idx}`, "4x", hexOf(n.portId)], [`${LLDP_REM}.8.${idx}`, "4", n.portId]);
    if (n.sysName) rows.push([`${LLDP_REM}.9.${idx}`, "4", n.sysName]);
    if (n.mgmt) rows.push([`${LLDP_MAN}.3.${idx}.1.4.${n.mgmt}`, "2", 2], [`${LLDP_MAN}.4.${idx}.1.4.${n.mgmt}`, "2", n.localPort]);
  }
  for (const c of d.cdp) {
    const idx = `${c.ifIndex}.1`;
    if (c.address) rows.push([`${CDP}.3.${idx}`, "2", 1], [`${CDP}.4.${idx}`, "4x", ipHex(c.address)]);
    rows.push([`${CDP}.6.${idx}`, "4", c.deviceId], [`${CDP}.7.${idx}`, "4", c.devicePort], [`${CDP}.8.${idx}`, "4", c.platform ?? "cisco WS-C2960"]);
  }
  return rows;
}

/** A device's whole .snmprec: system group and interfaces (GigabitEthernet0/N, ifName Gi0/N), then its LLDP and CDP rows. */
export function deviceRecording(d: TopoDevice): string {
  return syntheticRecording({
    community: d.key,
    sysName: d.sysName,
    interfaces: Array.from({ length: d.ports }, (_, i) => ({ name: `GigabitEthernet0/${i + 1}`, inBytesPerSec: 1000, outBytesPerSec: 500, speedMbps: 1000 })),
    hostResources: false,
    extra: neighborRows(d),
  });
}

export interface NetworkAgent {
  port: number;
  dir: string;
  /** Rewrites a device's recording and restarts snmpsimd (same port): what the device reports from then on. */
  update(device: TopoDevice): Promise<void>;
  /** Stops snmpsimd (every device goes silent), keeping its data; resume() starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

function program(name: string): string {
  for (const dir of [...(process.env.PATH ?? "").split(":").filter(Boolean), "/usr/sbin", "/usr/bin"]) if (existsSync(join(dir, name))) return join(dir, name);
  throw new Error(`${name} not found: install the Debian package snmpsim`);
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

function handToNobody(path: string): void {
  chownSync(path, 65534, 65534);
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) handToNobody(join(path, e));
}

async function answers(address: string, port: number, community: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = snmp.createSession(address, community, { port, retries: 0, timeout: 300, version: snmp.Version2c });
    s.on("error", () => undefined);
    s.get(["1.3.6.1.2.1.1.5.0"], (err) => {
      s.close();
      resolve(!err);
    });
  });
}

/** snmpsimd serving every device of `devices` at its own loopback address, all on one free port. */
export async function startNetworkAgent(devices: TopoDevice[]): Promise<NetworkAgent> {
  const dir = mkdtempSync(join(tmpdir(), "nms-topo-sim-"));
  const data = join(dir, "data");
  mkdirSync(data);
  mkdirSync(join(dir, "cache"));
  const write = (d: TopoDevice) => writeFileSync(join(data, `${d.key}.snmprec`), deviceRecording(d));
  devices.forEach(write);
  const port = await freeUdpPort();
  let child: ChildProcess | null = null;
  const launch = async () => {
    chmodSync(dir, 0o755);
    rmSync(join(dir, "cache"), { recursive: true, force: true });
    mkdirSync(join(dir, "cache"));
    if (isRoot()) handToNobody(dir);
    child = spawn(
      program("snmpsimd"),
      [
        `--data-dir=${data}`,
        `--cache-dir=${join(dir, "cache")}`,
        ...devices.map((d) => `--agent-udpv4-endpoint=${d.address}:${port}`),
        "--logging-method=null",
        ...(isRoot() ? ["--process-user=nobody", "--process-group=nogroup"] : []),
      ],
      { stdio: "ignore" },
    );
    const until = Date.now() + 60000;
    for (const d of devices) {
      while (!(await answers(d.address, port, d.key))) {
        if (child.exitCode !== null || Date.now() > until) throw new Error(`snmpsimd did not answer for ${d.key} at ${d.address}:${port}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const halt = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    const t = setTimeout(() => c.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(t);
  };
  await launch();
  return {
    port,
    dir,
    async update(device) {
      write(device);
      await halt();
      await launch();
    },
    pause: halt,
    resume: launch,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
