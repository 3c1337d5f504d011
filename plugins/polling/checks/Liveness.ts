import { spawn } from "node:child_process";
import { Socket } from "node:net";
import { isIpAddress } from "../../../core/index.js";
import type { PollTarget } from "../poller/types.js";
import { snmpGet, SYSTEM_OIDS } from "./SnmpGet.js";

export type LivenessMethod = "icmp" | "snmp" | "tcp";

export interface LivenessResult {
  reachable: boolean;
  /** What decided: the method that got an answer, else the first one tried. */
  method: LivenessMethod;
  /** Round trip of the answer that decided, in ms; null when nothing answered. */
  rtt_ms: number | null;
}

/** Whether this process may send ICMP echo through the system `ping`, found out once per binary. */
export interface IcmpCapability {
  available: boolean;
  binary: string;
  /** Why not, for the log ("no ping binary", "ping: socket: Operation not permitted"). */
  reason: string | null;
}

export interface LivenessOptions {
  /** Time each method waits for an answer. */
  timeoutMs: number;
  /** "auto": use the system ping when it works (detected once); "off": never ICMP. */
  icmp?: "auto" | "off";
  /** The ping binary (default `ping` on PATH: iputils-ping). */
  pingBinary?: string;
  /** TCP ports tried at once for TCP reachability; an answer (accept or refusal) on any of them counts. Empty = no TCP. */
  tcpPorts?: readonly number[];
}

/** Ports tried for TCP reachability: ssh, http, https. */
export const DEFAULT_TCP_PORTS: readonly number[] = Object.freeze([22, 80, 443]);

const detected = new Map<string, Promise<IcmpCapability>>();

/**
 * Runs `ping -c1` at 127.0.0.1 once per binary and process: ICMP counts as available only
 * when that works (the binary exists and may open its socket: cap_net_raw, root, or a
 * net.ipv4.ping_group_range that includes the process's group).
 */
export function detectIcmp(binary = "ping"): Promise<IcmpCapability> {
  let found = detected.get(binary);
  if (!found) {
    found = runPing(binary, "127.0.0.1", 2000).then((r) =>
      r.kind === "reply"
        ? { available: true, binary, reason: null }
        : {
            available: false,
            binary,
            reason: r.kind === "missing" ? `no ${binary} binary` : r.kind === "error" && r.detail ? r.detail : `${binary} got no reply from 127.0.0.1`,
          },
    );
    detected.set(binary, found);
  }
  return found;
}

type PingOutcome = { kind: "reply"; rtt_ms: number } | { kind: "none" } | { kind: "missing" } | { kind: "error"; detail: string };

/** `ping -n -q -c 1 -W secs address` (iputils; IPv6 by the address), killed at timeoutMs. */
function runPing(binary: string, address: string, timeoutMs: number): Promise<PingOutcome> {
  return new Promise((resolve) => {
    const waitSecs = Math.max(1, Math.ceil(timeoutMs / 1000));
    let out = "";
    let err = "";
    let settled = false;
    const settle = (o: PingOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    // address is a checked IP literal (never a name, never something starting with "-"); no shell.
    const child = spawn(binary, ["-n", "-q", "-c", "1", "-W", String(waitSecs), address], { stdio: ["ignore", "pipe", "pipe"] });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      settle({ kind: "none" });
    }, timeoutMs);
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", (e: NodeJS.ErrnoException) => settle(e.code === "ENOENT" ? { kind: "missing" } : { kind: "error", detail: e.code ?? "spawn failed" }));
    child.on("close", (code) => {
      if (code === 0) {
        // "rtt min/avg/max/mdev = 0.045/0.045/0.045/0.000 ms" (iputils) or "round-trip min/avg/max = …" (busybox)
        const m = /=\s*([\d.]+)\/([\d.]+)\//.exec(out);
        settle({ kind: "reply", rtt_ms: m ? Number(m[2]) : 0 });
      } else if (code === 1) {
        settle({ kind: "none" }); // no reply within the wait
      } else {
        settle({ kind: "error", detail: err.trim().split("\n")[0] ?? "" });
      }
    });
  });
}

/** Connects to each port at once; a completed handshake or a refusal (RST: the host is there) answers. */
function tcpReach(address: string, ports: readonly number[], timeoutMs: number): Promise<number | null> {
  if (!ports.length) return Promise.resolve(null);
  const started = performance.now();
  return new Promise((resolve) => {
    const sockets: Socket[] = [];
    let pending = ports.length;
    let settled = false;
    const settle = (rtt: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const s of sockets) s.destroy();
      resolve(rtt);
    };
    const timer = setTimeout(() => settle(null), timeoutMs);
    for (const port of ports) {
      const s = new Socket();
      sockets.push(s);
      s.once("connect", () => settle(performance.now() - started));
      s.once("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "ECONNREFUSED") settle(performance.now() - started);
        else if (--pending === 0) settle(null);
      });
      s.connect({ host: address, port });
    }
  });
}

/** Whichever settles first with a non-null value; null when all settle null. */
function firstAnswer<T>(attempts: Promise<T | null>[]): Promise<T | null> {
  if (!attempts.length) return Promise.resolve(null);
  return new Promise((resolve) => {
    let left = attempts.length;
    for (const a of attempts) {
      void a.then(
        (v) => {
          if (v !== null) resolve(v);
          else if (--left === 0) resolve(null);
        },
        () => {
          if (--left === 0) resolve(null);
        },
      );
    }
  });
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * Is the node there? In this order:
 *
 * 1. ICMP echo through the system `ping`, when this process may send it (detected once at
 *    start; see the plugin README for granting it). A reply decides.
 * 2. Otherwise, or when no echo came back (ICMP filtered): SNMP (a GET of sysUpTime.0 with
 *    the node's credential, no retry) and TCP (a connect to 22, 80 and 443 at once; a
 *    refusal counts, since only a live host sends a reset), side by side; the first to answer
 *    decides.
 *
 * Nothing answering is unreachable; `method` then names the first method tried.
 */
export class Liveness {
  private constructor(
    readonly icmp: IcmpCapability,
    private readonly opts: Required<Omit<LivenessOptions, "icmp" | "pingBinary">>,
  ) {}

  static async create(options: LivenessOptions): Promise<Liveness> {
    const binary = options.pingBinary ?? "ping";
    const icmp: IcmpCapability = options.icmp === "off" ? { available: false, binary, reason: "ICMP switched off" } : await detectIcmp(binary);
    return new Liveness(icmp, { timeoutMs: options.timeoutMs, tcpPorts: options.tcpPorts ?? DEFAULT_TCP_PORTS });
  }

  async check(target: PollTarget): Promise<LivenessResult> {
    const first: LivenessMethod = this.icmp.available ? "icmp" : target.snmp ? "snmp" : "tcp";
    if (!isIpAddress(target.address)) return { reachable: false, method: first, rtt_ms: null };
    const { timeoutMs, tcpPorts } = this.opts;

    if (this.icmp.available) {
      const r = await runPing(this.icmp.binary, target.address, timeoutMs);
      if (r.kind === "reply") return { reachable: true, method: "icmp", rtt_ms: round(r.rtt_ms) };
    }

    const attempts: Promise<LivenessResult | null>[] = [];
    if (target.snmp) {
      attempts.push(
        snmpGet(target.address, target.snmp, [SYSTEM_OIDS.sysUpTime], { port: target.snmp_port, timeoutMs, retries: 0 }).then((r) =>
          r.ok ? { reachable: true, method: "snmp", rtt_ms: round(r.rtt_ms) } : null,
        ),
      );
    }
    attempts.push(tcpReach(target.address, tcpPorts, timeoutMs).then((rtt) => (rtt === null ? null : { reachable: true, method: "tcp", rtt_ms: round(rtt) })));
    return (await firstAnswer(attempts)) ?? { reachable: false, method: first, rtt_ms: null };
  }
}
