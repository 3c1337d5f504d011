/**
 * The SNMP trap listener (`traps.udp`): v1, v2c and v3 traps and informs on net-snmp's receiver.
 *
 * net-snmp does the decoding, community/USM checks and inform acknowledgements. Around it this
 * module owns the socket (net-snmp cannot bind port 0, and we want the datagram's bytes; a worker thread reads it,
 * core's UdpReader, and the answers net-snmp makes leave from it through the reader), checks
 * the BER envelope first (net-snmp accepts truncated messages), classifies every datagram as
 * delivered, dropped (unknown community or user, failed digest or decryption) or malformed, and
 * bounds the v3 localized-key cache (see usmKeys.ts).
 *
 * The community is a secret: it is never put in a varbind (no snmpTrapCommunity.0 on v1 mapping) and
 * is overwritten in raw dumps; `TrapMessage.community` carries it for attribution only and must not
 * be stored. Informs are acknowledged by net-snmp before the consumer sees them.
 */
import { createDecipheriv } from "node:crypto";
import type { RemoteInfo, Socket } from "node:dgram";
import snmp from "net-snmp";
import { startUdpReader, type UdpReader } from "../../../core/index.js";
import type { BoundListener, Inbound, ListenerCounters, TrapMessage } from "../lib/types.js";
import { messageVersion, rawHex } from "./ber.js";
import { MalformedTrap, type Origin, type RawPdu, toTrapMessage } from "./convert.js";
import { LocalizedKeyCache } from "./usmKeys.js";

export type TrapAuthProtocol = "md5" | "sha" | "sha224" | "sha256" | "sha384" | "sha512";
/** `aes192`/`aes256` use Blumenthal key extension, as Net-SNMP's AES-192/AES-256 do. */
export type TrapPrivProtocol = "des" | "aes" | "aes192" | "aes256";

export interface TrapUser {
  name: string;
  level: "noAuthNoPriv" | "authNoPriv" | "authPriv";
  authProtocol?: TrapAuthProtocol;
  authKey?: string;
  privProtocol?: TrapPrivProtocol;
  privKey?: string;
}

/** Where the listener logs; never given secrets. */
export interface TrapLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface TrapListenerOptions {
  host: string;
  /** 0 binds any free port (see the returned listener's `port`). */
  port: number;
  /** v1/v2c communities accepted; empty accepts none. */
  communities: string[];
  /** v3 USM users accepted; empty accepts no v3 notification. */
  users: TrapUser[];
  /** Most localized USM keys kept (one per sender engine ID and user key); default 1024. */
  engineIdCacheSize?: number;
  /** This receiver's SNMP engine ID in hex (what v3 inform senders are configured with); random when absent. */
  engineId?: string;
  /** SO_RCVBUF to ask for, absorbing bursts (default 4 MiB; the kernel caps it). */
  recvBufferBytes?: number;
  /**
   * Called synchronously for every delivered or malformed datagram; the pipeline queues it. Returning false (queue
   * full) or throwing counts a delivered record as dropped; a malformed one stays counted as malformed only.
   */
  onMessage: (m: Inbound) => unknown;
  log?: TrapLog;
}

/**
 * Every datagram read is counted in `received` and then exactly once as delivered, `dropped` or `malformed`, or, for
 * an SNMPv3 engine-ID discovery probe (answered with a report, no notification), in discoveryProbes().
 */
export interface TrapListener extends BoundListener {
  /** Replaces the accepted v3 USM users (a credential added, changed or removed), without rebinding. */
  setUsers(users: TrapUser[]): void;
  /** Localized USM keys currently cached (at most engineIdCacheSize). */
  engineCacheSize(): number;
  /** SNMPv3 discovery probes answered (a v3 inform sender sends one before its first inform). */
  discoveryProbes(): number;
}

const LISTENER = "traps.udp";
const MIN_KEY_LENGTH = 8; // RFC 3414 §11.2: shorter passwords are refused (Net-SNMP does the same)
const REPORT_PDU = 168;
const USM_UNKNOWN_ENGINE_ID = "1.3.6.1.6.3.15.1.1.4.0";

// AES-192 has no constant in net-snmp; its algorithm table takes another id (the polling plugin registers the same entry).
const AES192_BLUMENTHAL = 10;

/** Whether OpenSSL offers DES-CBC (OpenSSL 3 moved it to the legacy provider): without it every DES trap would fail to decrypt. */
function desAvailable(): boolean {
  try {
    createDecipheriv("des-cbc", Buffer.alloc(8), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
}

function privProtocol(p: TrapPrivProtocol): number {
  switch (p) {
    case "des":
      if (!desAvailable()) throw new Error("DES privacy is not available in this runtime (OpenSSL 3 without its legacy provider)");
      return snmp.PrivProtocols.des;
    case "aes":
      return snmp.PrivProtocols.aes;
    case "aes256":
      return snmp.PrivProtocols.aes256b;
    case "aes192": {
      const algorithms = (snmp as unknown as { Encryption?: { algorithms?: Record<number, Record<string, unknown>> } }).Encryption?.algorithms;
      const aes256b = algorithms?.[snmp.PrivProtocols.aes256b];
      if (!algorithms || !aes256b) throw new Error("AES-192 privacy is not available in this net-snmp version");
      algorithms[AES192_BLUMENTHAL] ??= { ...aes256b, CRYPTO_ALGORITHM: "aes-192-cfb", KEY_LENGTH: 24 };
      return AES192_BLUMENTHAL;
    }
    default:
      throw new Error(`unknown SNMPv3 privacy protocol ${String(p)}`);
  }
}

/** The net-snmp user for a configured one; throws on an incomplete or weak definition (at start, not per trap). */
function netSnmpUser(u: TrapUser): snmp.User {
  if (!u.name) throw new Error("SNMPv3 trap user without a name");
  const level = snmp.SecurityLevel[u.level];
  if (level === undefined) throw new Error(`SNMPv3 trap user ${u.name}: unknown security level`);
  const user: snmp.User = { name: u.name, level };
  if (u.level !== "noAuthNoPriv") {
    const authProtocol = snmp.AuthProtocols[u.authProtocol ?? "sha"];
    if (authProtocol === undefined || u.authProtocol === ("none" as TrapAuthProtocol)) throw new Error(`SNMPv3 trap user ${u.name}: unknown auth protocol`);
    if (!u.authKey || u.authKey.length < MIN_KEY_LENGTH)
      throw new Error(`SNMPv3 trap user ${u.name}: auth key of at least ${MIN_KEY_LENGTH} characters needed`);
    user.authProtocol = authProtocol;
    user.authKey = u.authKey;
  }
  if (u.level === "authPriv") {
    if (!u.privKey || u.privKey.length < MIN_KEY_LENGTH)
      throw new Error(`SNMPv3 trap user ${u.name}: priv key of at least ${MIN_KEY_LENGTH} characters needed`);
    user.privProtocol = privProtocol(u.privProtocol ?? "aes") as snmp.PrivProtocols;
    user.privKey = u.privKey;
  }
  return user;
}

/** IPv4 for a v4-mapped IPv6 address, else the address as given. */
export function sourceIp(address: string): string {
  return address.length > 7 && address.slice(0, 7).toLowerCase() === "::ffff:" && address.includes(".") ? address.slice(7) : address;
}

/** The parts of net-snmp's receiver we drive (internal API of net-snmp 3.x). */
interface NetSnmpReceiver {
  onMsg(socket: Socket, buffer: Buffer, rinfo: RemoteInfo): void;
  listener: { send(message: SentMessage, rinfo: RemoteInfo, socket: Socket): void };
}
interface SentMessage {
  pdu?: { type?: number; varbinds?: { oid?: string }[] };
  toBuffer(): Buffer;
}

/** The outcome of the datagram being handled. */
interface Current {
  buf: Buffer;
  rinfo: RemoteInfo;
  version: number;
  /** An outcome was counted (delivered, dropped or malformed). */
  settled: boolean;
  /** net-snmp answered a v3 discovery probe: neither a notification nor an error. */
  discovery: boolean;
}

/** The net-snmp receiver's authorizer (internal API): the accepted communities and v3 users. */
interface Authorizer {
  addCommunity(c: string): void;
  addUser(u: snmp.User): void;
  deleteUser(name: string): void;
}

/** What net-snmp's answers (inform acknowledgements, USM reports) are sent through: the listening socket, in the reader. */
interface Replier {
  send(buf: Buffer, port: number, address: string): void;
}

/**
 * The outcome of every datagram: counted once as delivered, dropped or malformed (or as a discovery probe), and
 * delivered or malformed ones handed to the consumer. net-snmp reports a datagram's outcome synchronously, from inside
 * onMsg, through callback() or a report sent through replied().
 */
class TrapOutcomes {
  readonly counters: ListenerCounters = { received: 0, dropped: 0, malformed: 0 };
  probes = 0;
  /** The v3 users accepted (net-snmp also accepts a noAuthNoPriv message from an unknown empty user name). */
  userNames: Set<string>;
  /** The datagram being handled. */
  private cur: Current | null = null;

  constructor(
    private readonly onMessage: (m: Inbound) => unknown,
    private readonly log: TrapLog | undefined,
    users: readonly snmp.User[],
  ) {
    this.userNames = new Set(users.map((u) => u.name));
  }

  /** Handles one datagram read from the socket; `decode` hands it to net-snmp. */
  datagram(buf: Buffer, address: string, port: number, decode: (buf: Buffer, rinfo: RemoteInfo) => void): void {
    const rinfo: RemoteInfo = { address, port, family: address.includes(":") ? "IPv6" : "IPv4", size: buf.length };
    this.counters.received++;
    const version = messageVersion(buf);
    if (version === null) return this.malformed(buf, rinfo, "not a well-formed SNMP message");
    const c: Current = { buf, rinfo, version, settled: false, discovery: false };
    this.cur = c;
    try {
      decode(buf, rinfo);
    } catch (err) {
      if (!c.settled) {
        c.settled = true;
        this.malformed(buf, rinfo, `net-snmp failed: ${(err as Error)?.name ?? "error"}`);
      }
    } finally {
      this.cur = null;
    }
    if (c.discovery) this.probes++;
    else if (!c.settled) this.dropped(rinfo, "no outcome from net-snmp");
  }

  // net-snmp calls this synchronously from onMsg for every notification or refusal; socket errors come without a datagram.
  readonly callback = (error: (Error & { name?: string }) | null, data?: { pdu: RawPdu }): void => {
    const c = this.cur;
    if (!c) {
      if (error) this.log?.warn("trap socket error", { error: error.message });
      return;
    }
    c.settled = true;
    if (!error) return this.deliver(c, data!.pdu);
    // ProcessingError: the bytes did not decode; RequestInvalidError: not a notification PDU.
    // RequestFailedError: unknown community or user; ResponseInvalidError: wrong digest or undecryptable.
    if (error.name === "ProcessingError" || error.name === "RequestInvalidError") return this.malformed(c.buf, c.rinfo, error.name);
    this.dropped(c.rinfo, error.name === "RequestFailedError" ? "unknown community or user" : "authentication failed");
  };

  /** A message net-snmp sends: a report tells the outcome of datagrams that get no callback (discovery, a USM refusal). */
  replied(message: SentMessage, rinfo: RemoteInfo): void {
    const cur = this.cur;
    if (!cur || message.pdu?.type !== REPORT_PDU) return;
    if (message.pdu.varbinds?.[0]?.oid === USM_UNKNOWN_ENGINE_ID) cur.discovery = true;
    else if (!cur.settled) {
      cur.settled = true;
      this.dropped(rinfo, "refused with a USM report");
    }
  }

  private deliver(c: Current, pdu: RawPdu): void {
    const origin: Origin =
      c.version === 3
        ? { version: "v3", community: null, user: pdu.user ?? "" }
        : { version: c.version === 0 ? "v1" : "v2c", community: pdu.community ?? null, user: null };
    // net-snmp accepts a noAuthNoPriv v3 message with an empty user name even with no users configured.
    if (origin.version === "v3" && !this.userNames.has(origin.user as string)) return this.dropped(c.rinfo, "unknown v3 user");
    let trap: TrapMessage;
    try {
      trap = toTrapMessage(pdu, origin);
    } catch (err) {
      return this.malformed(c.buf, c.rinfo, err instanceof MalformedTrap ? err.message : `not convertible: ${String(err)}`);
    }
    this.emit({
      kind: "trap",
      transport: "udp",
      listener: LISTENER,
      source_ip: sourceIp(c.rinfo.address),
      received_at_ms: Date.now(),
      syslog: null,
      trap,
      raw: null,
      malformed: false,
      bytes: c.buf,
    });
  }

  private malformed(buf: Buffer, rinfo: RemoteInfo, why: string): void {
    this.counters.malformed++;
    this.log?.debug("malformed trap datagram", { source_ip: sourceIp(rinfo.address), reason: why });
    this.emit({
      kind: "trap",
      transport: "udp",
      listener: LISTENER,
      source_ip: sourceIp(rinfo.address),
      received_at_ms: Date.now(),
      syslog: null,
      trap: null,
      raw: rawHex(buf),
      malformed: true,
      bytes: buf,
    });
  }

  private dropped(rinfo: RemoteInfo, why: string): void {
    this.counters.dropped++;
    this.log?.debug("trap refused", { source_ip: sourceIp(rinfo.address), reason: why });
  }

  // A consumer that refuses or throws loses the record: counted as dropped, unless it was already counted as malformed.
  private emit(m: Inbound): void {
    let accepted: unknown = true;
    try {
      accepted = this.onMessage(m);
    } catch (err) {
      accepted = false;
      this.log?.warn("trap consumer failed; message lost", { error: String(err) });
    }
    if (accepted === false && !m.malformed) this.counters.dropped++;
  }
}

/** The configured v3 users for net-snmp; throws on an invalid engine ID or user (at start, not per trap). */
function checkedUsers(opts: TrapListenerOptions): snmp.User[] {
  if (opts.engineId !== undefined && !/^(0x)?([0-9a-f]{2}){5,32}$/i.test(opts.engineId)) throw new Error("engineId must be 5 to 32 bytes of hex");
  return opts.users.map(netSnmpUser);
}

/**
 * net-snmp's receiver, with a stand-in socket (the datagrams come from the reader), the communities and users, and its
 * answers routed to `replier` past `outcomes`.
 */
function netSnmpReceiver(opts: TrapListenerOptions, family: "udp4" | "udp6", users: readonly snmp.User[], outcomes: TrapOutcomes, replier: Replier) {
  // net-snmp opens its own socket through this module: it gets a stand-in.
  const dgramModule = {
    createSocket: () => ({ on: () => undefined, bind: () => undefined, close: () => undefined }),
  };
  const receiver = snmp.createReceiver(
    { transport: family, address: opts.host, port: opts.port || 162, includeAuthentication: true, engineID: opts.engineId, dgramModule },
    outcomes.callback,
  ) as NetSnmpReceiver;
  if (typeof receiver.onMsg !== "function") throw new Error("this net-snmp version's receiver internals are not the ones the trap listener drives");
  const authorizer = (receiver as unknown as { authorizer: Authorizer }).authorizer;
  for (const c of opts.communities) authorizer.addCommunity(c);
  for (const u of users) authorizer.addUser(u);
  // net-snmp sends inform acknowledgements and USM reports through this (its own logs failures to console.error).
  receiver.listener.send = (message, rinfo) => {
    outcomes.replied(message, rinfo);
    replier.send(message.toBuffer(), rinfo.port, rinfo.address);
  };
  return { receiver, authorizer };
}

/**
 * Binds the socket, read by a worker thread (core's UdpReader): the main thread's stalls (a batch written, a
 * collection) do not overflow the kernel buffer; each datagram comes back, in order, as a view into the batch.
 */
function openTrapSocket(
  opts: TrapListenerOptions,
  family: "udp4" | "udp6",
  outcomes: TrapOutcomes,
  onDatagram: (buf: Buffer, address: string, port: number) => void,
) {
  const log = opts.log;
  return startUdpReader({
    type: family,
    host: opts.host,
    port: opts.port,
    recvBufferSize: opts.recvBufferBytes ?? 4 << 20,
    onDatagram,
    onError: (err) => log?.warn("trap socket error", { error: err.message }),
    onBacklogDrops: (n) => {
      outcomes.counters.received += n;
      outcomes.counters.dropped += n;
      log?.warn("trap datagrams dropped: the pipeline is behind", { dropped: n });
    },
  });
}

/** Binds the trap listener. Rejects when the address cannot be bound or the configuration is invalid. */
export async function startTrapListener(opts: TrapListenerOptions): Promise<TrapListener> {
  const users = checkedUsers(opts);
  const keys = new LocalizedKeyCache(opts.engineIdCacheSize ?? 1024);
  const family = opts.host.includes(":") ? "udp6" : "udp4";
  const outcomes = new TrapOutcomes(opts.onMessage, opts.log, users);

  let reader: UdpReader | null = null;
  const replier: Replier = { send: (buf, port, address) => reader?.send(buf, port, address) };
  const { receiver, authorizer } = netSnmpReceiver(opts, family, users, outcomes, replier);
  const decode = (buf: Buffer, rinfo: RemoteInfo) => keys.run(() => receiver.onMsg(replier as unknown as Socket, buf, rinfo));
  reader = await openTrapSocket(opts, family, outcomes, (buf, address, port) => outcomes.datagram(buf, address, port, decode));
  const open = reader;

  let closed: Promise<void> | null = null;
  return {
    name: LISTENER,
    stream: "trap",
    protocol: "udp",
    address: open.address,
    port: open.port,
    counters: outcomes.counters,
    setUsers(next: TrapUser[]) {
      const mapped = next.map(netSnmpUser);
      for (const name of outcomes.userNames) authorizer.deleteUser(name);
      for (const u of mapped) authorizer.addUser(u);
      // A changed password localizes to new keys (the cache is keyed by password and engine): old entries just age out.
      outcomes.userNames = new Set(mapped.map((u) => u.name));
    },
    engineCacheSize: () => keys.size,
    discoveryProbes: () => outcomes.probes,
    close() {
      closed ??= open.close();
      return closed;
    },
  };
}
