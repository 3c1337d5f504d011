/**
 * Real syslog peers on loopback for tests: util-linux `logger`, `rsyslogd` as a relay (imudp in, omfwd out over
 * UDP, TCP or TLS), and `rsyslogd` as a receiver (imudp / imtcp / imtcp over gtls in, each raw message to a file). rsyslogd runs with a private configuration in a temporary folder,
 * is stopped by its pid, and its folder is removed (stopAllSyslogPeers() in afterAll is the safety net).
 * Certificates for rsyslog's TLS driver are made with the `openssl` program (a test peer only).
 *
 * Needs the Debian packages rsyslog, rsyslog-gnutls, bsdutils (logger) and openssl.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freeUdpPort, LOOPBACK } from "./snmpAgents.js";
import type { TestKernel } from "./testKernel.js";

export { freeUdpPort, LOOPBACK };
const run = promisify(execFile);

/** One datagram (a syslog message, or junk) to 127.0.0.1:port, sent from the loopback address `from`. */
export function sendUdp(port: number, data: string | Buffer, from = LOOPBACK): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createSocket("udp4");
    s.once("error", reject);
    s.bind(0, from, () => s.send(data, port, LOOPBACK, (err) => (s.close(), err ? reject(err) : resolve())));
  });
}

/**
 * One UDP sender (one socket, so one source port) for many datagrams: the service's ingest workers share a port
 * (SO_REUSEPORT) and the kernel gives each source address and port to one of them, so only what one socket sends
 * keeps its order (as from one device). Close it when done.
 */
export async function udpSender(from = LOOPBACK): Promise<{ send(port: number, data: string | Buffer): Promise<void>; close(): void }> {
  const s = createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.bind(0, from, () => resolve());
  });
  return {
    send: (port, data) => new Promise((resolve, reject) => s.send(data, port, LOOPBACK, (err) => (err ? reject(err) : resolve()))),
    close: () => s.close(),
  };
}

/** `n` senders, each its own socket and so its own source port (the kernel spreads them over the ingest workers' sockets). */
export function udpSenders(n: number, from = LOOPBACK): Promise<Awaited<ReturnType<typeof udpSender>>[]> {
  return Promise.all(Array.from({ length: n }, () => udpSender(from)));
}

/** The port a kernel's listener (`syslog.udp`, `syslog.tcp`, …) is bound to, from GET /listeners. */
export async function listenerPort(k: TestKernel, name: string): Promise<number> {
  const { listeners } = (await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] };
  return listeners.find((l) => l.name === name)!.port;
}

/** A free TCP port on loopback. */
export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, LOOPBACK, () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface LoggerSend {
  port: number;
  transport: "udp" | "tcp";
  format: "rfc5424" | "rfc3164";
  /** RFC 6587 octet counting (TCP); without it logger ends each message with LF. */
  octetCount?: boolean;
  tag?: string;
  /** "facility.level", default user.notice. */
  priority?: string;
  /** Adds "--id=<pid>". */
  pid?: number;
  msgid?: string;
  /** RFC 5424 structured data: [sd-id, ["name=\"value\"", ...]]. */
  sd?: [string, string[]][];
  message: string;
}

/** Sends one message with util-linux logger to 127.0.0.1:port. */
export async function sendWithLogger(o: LoggerSend): Promise<void> {
  const args = ["-n", LOOPBACK, "-P", String(o.port), o.transport === "udp" ? "--udp" : "--tcp", o.format === "rfc5424" ? "--rfc5424" : "--rfc3164"];
  if (o.octetCount) args.push("--octet-count");
  args.push("-t", o.tag ?? "nmstest", "-p", o.priority ?? "user.notice");
  if (o.pid !== undefined) args.push(`--id=${o.pid}`);
  if (o.msgid) args.push("--msgid", o.msgid);
  for (const [id, params] of o.sd ?? []) {
    args.push("--sd-id", id);
    for (const p of params) args.push("--sd-param", p);
  }
  args.push("--", o.message);
  await run("logger", args, { timeout: 10_000 });
}

const children = new Set<ChildProcess>();
const running = new Set<{ stop(): Promise<void> }>();

process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** Stops every rsyslogd (relay or receiver) this module started that is still running (afterAll safety net). */
export async function stopAllSyslogPeers(): Promise<void> {
  await Promise.all([...running].map((r) => r.stop()));
}

export interface RsyslogRelayOptions {
  /** Where the relay forwards to (our listener). */
  forwardPort: number;
  protocol: "udp" | "tcp" | "tls";
  /** TCP/TLS framing: "octet-counted" or rsyslog's default LF framing ("traditional"). */
  framing?: "octet-counted" | "traditional";
  /** Forwarding template, default RSYSLOG_SyslogProtocol23Format (RFC 5424); RSYSLOG_ForwardFormat is BSD with an RFC 3339 time. */
  template?: "RSYSLOG_SyslogProtocol23Format" | "RSYSLOG_ForwardFormat" | "RSYSLOG_TraditionalForwardFormat";
}

export interface RsyslogRelay {
  /** UDP port rsyslogd's imudp listens on (send to it with logger). */
  inputPort: number;
  dir: string;
  pid: number;
  /** rsyslogd's output so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/** Makes a self-signed pair with the openssl CLI (for rsyslog's gtls driver, which wants files). */
export async function opensslPair(dir: string, cn: string): Promise<{ certPath: string; keyPath: string }> {
  const certPath = join(dir, `${cn}.crt`);
  const keyPath = join(dir, `${cn}.key`);
  await run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", `/CN=${cn}`, "-keyout", keyPath, "-out", certPath], {
    timeout: 30_000,
  });
  return { certPath, keyPath };
}

/**
 * Starts rsyslogd in the foreground with a private config: imudp on a free loopback port, every message
 * forwarded by omfwd to 127.0.0.1:forwardPort. Resolves once the UDP input is listening.
 */
export async function startRsyslogRelay(o: RsyslogRelayOptions): Promise<RsyslogRelay> {
  const dir = mkdtempSync(join(tmpdir(), "nms-rsyslog-"));
  const work = join(dir, "work");
  mkdirSync(work);
  const inputPort = await freeUdpPort();
  const lines: string[] = [];
  const globals = [`workDirectory="${work}"`, `maxMessageSize="64k"`];
  const action = [
    `type="omfwd"`,
    `target="${LOOPBACK}"`,
    `port="${o.forwardPort}"`,
    `protocol="${o.protocol === "udp" ? "udp" : "tcp"}"`,
    `template="${o.template ?? "RSYSLOG_SyslogProtocol23Format"}"`,
  ];
  if (o.protocol !== "udp" && o.framing === "octet-counted") action.push(`TCP_Framing="octet-counted"`);
  if (o.protocol === "tls") {
    const { certPath, keyPath } = await opensslPair(dir, "rsyslog-client");
    globals.push(`defaultNetstreamDriverCAFile="${certPath}"`, `defaultNetstreamDriverCertFile="${certPath}"`, `defaultNetstreamDriverKeyFile="${keyPath}"`);
    action.push(`streamDriver="gtls"`, `streamDriverMode="1"`, `streamDriverAuthMode="anon"`);
  }
  // Retry quickly: the tests start the relay before or right after the listener.
  action.push(`action.resumeRetryCount="-1"`, `action.resumeInterval="1"`);
  lines.push(`global(${globals.join(" ")})`);
  lines.push(`module(load="imudp")`);
  lines.push(`input(type="imudp" address="${LOOPBACK}" port="${inputPort}")`);
  lines.push(`action(${action.join(" ")})`);
  const proc = spawnRsyslogd(dir, lines);
  const relay: RsyslogRelay = { inputPort, dir, pid: proc.pid, output: proc.output, stop: proc.stop };
  try {
    await waitUdpListening(inputPort, 15_000, proc.child);
  } catch (err) {
    const text = proc.output();
    await proc.stop();
    throw new Error(`${(err as Error).message}\n${text}`);
  }
  return relay;
}

interface RsyslogProcess {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Stops rsyslogd (SIGTERM, then SIGKILL after 5 s) and removes its folder. Idempotent. */
  stop(): Promise<void>;
}

/** Runs rsyslogd in the foreground on a config of `lines` written in `dir`; stopAllSyslogPeers() stops it too. */
function spawnRsyslogd(dir: string, lines: string[]): RsyslogProcess {
  const conf = join(dir, "rsyslog.conf");
  writeFileSync(conf, lines.join("\n") + "\n");
  const pidFile = join(dir, "rsyslogd.pid");
  const child = spawn("rsyslogd", ["-n", "-f", conf, "-i", pidFile], { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const out: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => out.push(b));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", () => children.delete(child));
  const output = () => Buffer.concat(out).toString("utf8") + (existsSync(conf) ? `\n--- ${conf}\n${readFileSync(conf, "utf8")}` : "");
  let stopped: Promise<void> | null = null;
  const proc: RsyslogProcess = {
    child,
    pid: child.pid ?? -1,
    output,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
          await exited;
          clearTimeout(timer);
        }
        running.delete(proc);
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
  running.add(proc);
  return proc;
}

export interface RsyslogReceiverOptions {
  protocol: "udp" | "tcp" | "tls";
  /** A port to listen on (a receiver restarted on the port of one stopped); default a free one. */
  port?: number;
}

export interface RsyslogReceiver {
  port: number;
  /** PEM of the TLS listener's self-signed certificate (subject alt names 127.0.0.1 and localhost). */
  certPem: string | null;
  /** Every message received so far, as rsyslog read it (`%rawmsg%`: the datagram or frame, unchanged). */
  messages(): string[];
  /** Waits until at least `n` messages have arrived (or the deadline passes) and answers them. */
  waitFor(n: number, timeoutMs?: number): Promise<string[]>;
  output(): string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts rsyslogd as a syslog receiver on a free loopback port (imudp, or imtcp with octet counting or LF framing
 * detected per frame, or imtcp over its gtls driver), writing each message's raw text (`%rawmsg%`, control
 * characters kept) as one line of a file. Resolves once the input listens.
 */
export async function startRsyslogReceiver(o: RsyslogReceiverOptions): Promise<RsyslogReceiver> {
  const dir = mkdtempSync(join(tmpdir(), "nms-rsyslog-rx-"));
  const work = join(dir, "work");
  mkdirSync(work);
  const port = o.port ?? (o.protocol === "udp" ? await freeUdpPort() : await freeTcpPort());
  const file = join(dir, "received.log");
  const globals = [`workDirectory="${work}"`, `maxMessageSize="64k"`, `parser.escapeControlCharactersOnReceive="off"`];
  let certPem: string | null = null;
  if (o.protocol === "tls") {
    const certPath = join(dir, "rx.crt");
    const keyPath = join(dir, "rx.key");
    await run(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", "/CN=localhost"].concat([
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-keyout",
        keyPath,
        "-out",
        certPath,
      ]),
      { timeout: 30_000 },
    );
    certPem = readFileSync(certPath, "utf8");
    globals.push(`defaultNetstreamDriverCAFile="${certPath}"`, `defaultNetstreamDriverCertFile="${certPath}"`, `defaultNetstreamDriverKeyFile="${keyPath}"`);
  }
  const lines = [`global(${globals.join(" ")})`, `template(name="raw" type="string" string="%rawmsg%\\n")`];
  if (o.protocol === "udp") {
    lines.push(`module(load="imudp")`, `input(type="imudp" address="${LOOPBACK}" port="${port}" ruleset="rx")`);
  } else if (o.protocol === "tcp") {
    lines.push(`module(load="imtcp")`, `input(type="imtcp" address="${LOOPBACK}" port="${port}" ruleset="rx")`);
  } else {
    lines.push(
      `module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")`,
      `input(type="imtcp" address="${LOOPBACK}" port="${port}" ruleset="rx")`,
    );
  }
  lines.push(`ruleset(name="rx") { action(type="omfile" file="${file}" template="raw" flushOnTXEnd="on" asyncWriting="off") }`);
  const proc = spawnRsyslogd(dir, lines);
  const messages = () => (existsSync(file) ? readFileSync(file, "utf8").split("\n").slice(0, -1) : []).filter((m) => !m.includes("nms-probe"));
  const receiver: RsyslogReceiver = {
    port,
    certPem,
    messages,
    async waitFor(n, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (messages().length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      return messages();
    },
    output: proc.output,
    pid: proc.pid,
    stop: proc.stop,
  };
  try {
    if (o.protocol === "udp") await waitUdpListening(port, 15_000, proc.child);
    else await waitTcpListening(port, 15_000, proc.child);
  } catch (err) {
    const text = proc.output();
    await proc.stop();
    throw new Error(`${(err as Error).message}\n${text}`);
  }
  return receiver;
}

/** Waits until a TCP connection to 127.0.0.1:port is accepted. */
async function waitTcpListening(port: number, deadlineMs: number, child: ChildProcess): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`rsyslogd exited with code ${child.exitCode} before listening on tcp ${port}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, LOOPBACK);
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`rsyslogd did not listen on tcp ${LOOPBACK}:${port} within ${deadlineMs} ms`);
}

/**
 * Waits until something listens on udp 127.0.0.1:port: a connected UDP socket gets ECONNREFUSED (ICMP port
 * unreachable) while nothing does. The probe datagram is not a syslog message rsyslog would forward usefully:
 * it is tagged "nms-probe" so tests can ignore it.
 */
async function waitUdpListening(port: number, deadlineMs: number, child: ChildProcess): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`rsyslogd exited with code ${child.exitCode} before listening on udp ${port}`);
    const listening = await new Promise<boolean>((resolve) => {
      const s = createSocket("udp4");
      let done = false;
      const finish = (v: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        s.close();
        resolve(v);
      };
      const timer = setTimeout(() => finish(true), 250);
      s.on("error", () => finish(false));
      s.connect(port, LOOPBACK, () => {
        s.send("<15>nms-probe: probe", (err) => {
          if (err) finish(false);
        });
      });
    });
    if (listening) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`rsyslogd did not listen on udp ${LOOPBACK}:${port} within ${deadlineMs} ms`);
}
