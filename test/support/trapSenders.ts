/**
 * Real SNMP notification senders for tests, on loopback: Net-SNMP's snmptrap and snmpinform (run
 * without MIB files, so OIDs are numeric; with a private persistent folder and no user config),
 * a capture of what they send, and raw datagrams from node:dgram for fuzzing.
 *
 * And Net-SNMP's snmptrapd as a collector, the far end of trap forwarding.
 *
 * Needs the Debian packages snmp (Net-SNMP command-line tools) and snmptrapd.
 */
import { execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freeUdpPort } from "./snmpAgents.js";

export const LOOPBACK = "127.0.0.1";

let persistentDir: string | null = null;

/** Net-SNMP's environment: no MIBs, no configuration files, engine state in a temporary folder. */
export function senderEnv(): NodeJS.ProcessEnv {
  persistentDir ??= mkdtempSync(join(tmpdir(), "nms-snmptrap-"));
  return { ...process.env, MIBS: ":", MIBDIRS: "/nonexistent", SNMPCONFPATH: persistentDir, SNMP_PERSISTENT_DIR: persistentDir };
}

/** Removes the senders' temporary folder (call in afterAll). */
export function removeSenderState(): void {
  if (persistentDir) rmSync(persistentDir, { recursive: true, force: true });
  persistentDir = null;
}

export interface SenderResult {
  /** Exit code (0: sent; for snmpinform, acknowledged). */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs snmptrap or snmpinform with `args` and resolves with its exit code and output (never rejects on a non-zero exit). */
export function runSender(cmd: "snmptrap" | "snmpinform", args: string[], timeoutMs = 15000): Promise<SenderResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: senderEnv(), timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

/** `snmptrap` that must succeed. */
export async function snmptrap(args: string[]): Promise<void> {
  const r = await runSender("snmptrap", args);
  if (r.code !== 0) throw new Error(`snmptrap ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
}

/** `snmpinform`: resolves with its exit code (0 means the receiver acknowledged). */
export async function snmpinform(args: string[]): Promise<SenderResult> {
  return runSender("snmpinform", args);
}

/** The first datagram `send(port)` delivers to a UDP socket bound on loopback (to capture a real trap's bytes). */
export async function captureDatagram(send: (port: number) => Promise<unknown>, timeoutMs = 10000): Promise<Buffer> {
  const s = createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.bind(0, LOOPBACK, () => resolve());
  });
  try {
    const got = new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no datagram captured")), timeoutMs);
      s.once("message", (msg: Buffer) => {
        clearTimeout(timer);
        resolve(msg);
      });
    });
    // An inform waits for an answer that never comes: do not wait for the sender, only for its datagram.
    void send(s.address().port).catch(() => undefined);
    return await got;
  } finally {
    s.close();
  }
}

/** Sends `datagrams` one after the other to host:port from one socket, pausing now and then so loopback does not drop them. */
export async function sendDatagrams(port: number, datagrams: Buffer[], host = LOOPBACK): Promise<void> {
  const s = createSocket(host.includes(":") ? "udp6" : "udp4");
  try {
    for (let i = 0; i < datagrams.length; i++) {
      await new Promise<void>((resolve, reject) => s.send(datagrams[i], port, host, (err) => (err ? reject(err) : resolve())));
      if (i % 50 === 49) await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    s.close();
  }
}

/** A minimal BER encoder, to craft SNMP messages no real sender produces (wrong versions, missing fields, empty v3 users). */
export const ber = {
  tlv(tag: number, content: Buffer): Buffer {
    const n = content.length;
    const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
    return Buffer.concat([Buffer.from([tag]), len, content]);
  },
  seq(...parts: Buffer[]): Buffer {
    return ber.tlv(0x30, Buffer.concat(parts));
  },
  int(v: number, tag = 0x02): Buffer {
    const bytes: number[] = [];
    let x = v;
    do {
      bytes.unshift(x & 0xff);
      x = Math.floor(x / 256);
    } while (x !== 0 && x !== -1);
    if (v >= 0 && bytes[0] & 0x80) bytes.unshift(0);
    if (v < 0 && !(bytes[0] & 0x80)) bytes.unshift(0xff);
    return ber.tlv(tag, Buffer.from(bytes));
  },
  str(s: string | Buffer, tag = 0x04): Buffer {
    return ber.tlv(tag, typeof s === "string" ? Buffer.from(s, "utf8") : s);
  },
  oid(dotted: string): Buffer {
    const [a, b, ...rest] = dotted.split(".").map(Number);
    const out = [a * 40 + b];
    for (const n of rest) {
      const chunk = [n & 0x7f];
      for (let x = Math.floor(n / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift((x & 0x7f) | 0x80);
      out.push(...chunk);
    }
    return ber.tlv(0x06, Buffer.from(out));
  },
  varbinds(vbs: [oid: string, value: Buffer][]): Buffer {
    return ber.seq(...vbs.map(([oid, value]) => ber.seq(ber.oid(oid), value)));
  },
  /** A v1 (0) / v2c (1) message with a TrapV2 (0xa7) or other PDU. */
  community(version: number, community: string, pduTag: number, vbs: [string, Buffer][]): Buffer {
    return ber.seq(ber.int(version), ber.str(community), ber.tlv(pduTag, Buffer.concat([ber.int(1), ber.int(0), ber.int(0), ber.varbinds(vbs)])));
  },
  /** A noAuthNoPriv SNMPv3 TrapV2 from `engineId` with user `user`. */
  v3NoAuth(engineId: Buffer, user: string, vbs: [string, Buffer][]): Buffer {
    const header = ber.seq(ber.int(7), ber.int(65507), ber.str(Buffer.from([0])), ber.int(3));
    const usm = ber.str(ber.seq(ber.str(engineId), ber.int(1), ber.int(100), ber.str(user), ber.str(""), ber.str("")));
    const scoped = ber.seq(ber.str(engineId), ber.str(""), ber.tlv(0xa7, Buffer.concat([ber.int(1), ber.int(0), ber.int(0), ber.varbinds(vbs)])));
    return ber.seq(ber.int(3), header, usm, scoped);
  },
};

export interface Snmptrapd {
  port: number;
  /** One line per notification received and accepted: `TRAP <sender address> <varbinds, tab-separated>` (numeric OIDs). */
  traps(): string[];
  output(): string;
  stop(): Promise<void>;
}

/**
 * Net-SNMP's snmptrapd as a trap collector on a free loopback port, accepting (and logging) only the v1/v2c
 * communities given; every other notification is refused by snmptrapd itself. Needs the Debian package snmptrapd.
 */
export async function startSnmptrapd(communities: string[]): Promise<Snmptrapd> {
  const dir = mkdtempSync(join(tmpdir(), "nms-snmptrapd-"));
  const port = await freeUdpPort();
  const log = join(dir, "traps.log");
  const conf = join(dir, "snmptrapd.conf");
  writeFileSync(
    conf,
    [
      `snmpTrapdAddr udp:${LOOPBACK}:${port}`,
      ...communities.map((c) => `authCommunity log ${c}`),
      "doNotRetainNotificationLogs yes",
      "format2 TRAP %b %V\\t%v\\n",
      "format1 TRAP %b %V\\t%v\\n",
      "",
    ].join("\n"),
  );
  const env = { ...senderEnv(), SNMP_PERSISTENT_DIR: dir };
  const child = spawn("snmptrapd", ["-f", "-C", "-c", conf, "-Lf", log, "-n", "-On"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const out: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => out.push(b));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const traps = () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .split("\n")
          .filter((l) => l.startsWith("TRAP "))
      : [];
  const output = () => Buffer.concat(out).toString("utf8") + (existsSync(log) ? `\n--- ${log}\n${readFileSync(log, "utf8")}` : "");
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Listening once the log says so (snmptrapd writes "NET-SNMP version …" once its socket is open).
  const until = Date.now() + 15_000;
  while (!(existsSync(log) && readFileSync(log, "utf8").includes("NET-SNMP version"))) {
    if (child.exitCode !== null || Date.now() > until) {
      const text = output();
      await stop();
      throw new Error(`snmptrapd did not start on udp ${port}\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, traps, output, stop };
}
