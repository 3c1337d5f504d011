import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EventsConfig } from "../context.js";
import { startSyslogListeners } from "../syslog/server.js";
import { ensureSelfSignedPair } from "../syslog/selfsigned.js";
import { startTrapListener, type TrapUser } from "../traps/receiver.js";
import type { BoundListener, Inbound } from "./types.js";

/** The listeners the plugin declares in its manifest (name → stream and protocol). */
export const LISTENERS = [
  { name: "syslog.udp", stream: "syslog", protocol: "udp" },
  { name: "syslog.tcp", stream: "syslog", protocol: "tcp" },
  { name: "syslog.tls", stream: "syslog", protocol: "tls" },
  { name: "traps.udp", stream: "trap", protocol: "udp" },
] as const;

export type ListenerName = (typeof LISTENERS)[number]["name"];

interface ReceiverLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** What to do about a failed bind: the privileged ports need root or a capability. */
export function bindHint(port: number, err: NodeJS.ErrnoException): string {
  if (err.code === "EACCES" && port < 1024) {
    return `port ${port} needs root, or CAP_NET_BIND_SERVICE (setcap cap_net_bind_service=+ep "$(command -v node)"), or sysctl net.ipv4.ip_unprivileged_port_start=${port}; or set another port in pluginConfig.events`;
  }
  if (err.code === "EADDRINUSE") return `port ${port} is in use by another program`;
  return err.message;
}

/**
 * Binds the configured receivers (syslog UDP/TCP/TLS, SNMP traps), each handing what it receives to `deliver` (false
 * = dropped, counted by the listener). A listener whose port is null stays off; one that cannot bind is logged with what
 * to do and left out, and the others run: a monitoring core (or poller) does not refuse to start over one port. Used by
 * the core (ListenerService) and by remote pollers (poller/passive.ts) alike.
 */
export async function bindReceivers(
  cfg: EventsConfig,
  deliver: (m: Inbound) => boolean,
  opts: { dataDir: string; trapUsers: () => Promise<TrapUser[]>; log: ReceiverLog; onBound?: (name: ListenerName, l: BoundListener) => void },
): Promise<BoundListener[]> {
  const s = cfg.syslog;
  const common = {
    host: s.bindAddress,
    maxMessageBytes: s.maxMessageBytes,
    idleTimeoutMs: s.idleTimeoutMs,
    maxConnectionsPerAddress: s.maxConnectionsPerAddress,
    maxConnections: s.maxConnections,
    udpReceiveBufferBytes: s.udpReceiveBufferBytes,
    onMessage: deliver,
    log: opts.log,
  };
  const off = { udp: null, tcp: null, tls: null };
  const bound: BoundListener[] = [];
  const bind = async (name: ListenerName, port: number | null, open: (port: number) => Promise<BoundListener[]>) => {
    if (port === null) return;
    try {
      for (const l of await open(port)) {
        bound.push(l);
        opts.onBound?.(name, l);
      }
    } catch (err) {
      opts.log.error(`events: listener ${name} not bound: ${bindHint(port, err as NodeJS.ErrnoException)}`, { listener: name, port });
    }
  };
  await bind("syslog.udp", s.udp, (udp) => startSyslogListeners({ ...common, ...off, udp }));
  await bind("syslog.tcp", s.tcp, (tcp) => startSyslogListeners({ ...common, ...off, tcp }));
  await bind("syslog.tls", s.tls, async (tls) => {
    const pair = await tlsPair(cfg, opts.dataDir);
    return startSyslogListeners({ ...common, ...off, tls, tlsCert: pair.cert, tlsKey: pair.key });
  });
  const t = cfg.traps;
  await bind("traps.udp", t.udp, async (port) => [
    await startTrapListener({
      host: t.bindAddress,
      port,
      communities: t.communities,
      users: await opts.trapUsers(),
      engineIdCacheSize: t.engineIdCacheSize,
      engineId: t.engineId ?? (await keptEngineId(opts.dataDir)),
      onMessage: deliver,
      log: opts.log,
    }),
  ]);
  return bound;
}

/**
 * The trap receiver's SNMP engine id, made once and kept in the data directory, so a v3 inform sender configured
 * with it keeps working across restarts: RFC 3411 format 5 (octets) under the net-snmp enterprise, 8 random bytes.
 */
async function keptEngineId(dataDir: string): Promise<string> {
  const path = join(dataDir, "events-trap-engine-id");
  try {
    const kept = (await readFile(path, "utf8")).trim();
    if (/^([0-9a-f]{2}){5,32}$/i.test(kept)) return kept;
  } catch {
    // none yet
  }
  const made = `80001f8805${randomBytes(8).toString("hex")}`;
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, `${made}\n`, { mode: 0o644 });
  return made;
}

/** The configured PEM files, else a self-signed pair made once in the data directory. */
export async function tlsPair(cfg: EventsConfig, dataDir: string): Promise<{ cert: string; key: string }> {
  const { tlsCert, tlsKey } = cfg.syslog;
  if (tlsCert && tlsKey) return { cert: await readFile(tlsCert, "utf8"), key: await readFile(tlsKey, "utf8") };
  if (tlsCert || tlsKey) throw new Error("pluginConfig.events.syslog needs both tlsCert and tlsKey (or neither, for a self-signed pair)");
  const pair = await ensureSelfSignedPair(join(dataDir, "events-tls"));
  return { cert: pair.cert, key: pair.key };
}
