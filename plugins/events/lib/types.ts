/**
 * Shapes shared by the events plugin's receivers (syslog, traps), its rule engine and its store.
 * The receivers produce `Inbound` records; the pipeline attributes them to a node, matches them
 * against the rules and writes them.
 */
import type { MirrorCount, MirrorTarget } from "../../../core/worker.js";

/** The passive streams of the spec ("Events" 4). Flow belongs to the flows plugin. */
export type EventKind = "syslog" | "trap";
export const EVENT_KINDS: readonly EventKind[] = ["syslog", "trap"];

/** How a record arrived. `http` is the ingest source; `poller` a batch a remote poller forwarded. */
export type Transport = "udp" | "tcp" | "tls" | "http";

/** One structured-data element of RFC 5424 (several per message; a param name may repeat). */
export interface SdElement {
  id: string;
  params: [string, string][];
}

/** A syslog message as parsed. Fields the sender did not give (or the format has not) are null. */
export interface SyslogMessage {
  /** Which grammar read it: strict RFC 5424, RFC 3164 (BSD), a Cisco IOS line, or `raw` when only the PRI (or nothing) parsed. */
  format: "rfc5424" | "rfc3164" | "cisco" | "raw";
  facility: number | null;
  /** 0 (emergency) to 7 (debug). */
  severity: number | null;
  /** RFC 3339 text of the sender's timestamp, normalised to UTC with millisecond precision; null when absent or unparseable. */
  timestamp: string | null;
  hostname: string | null;
  app_name: string | null;
  procid: string | null;
  msgid: string | null;
  structured_data: SdElement[];
  message: string;
  /** Cisco IOS `%FAC-SEV-MNEMONIC` parts and the sequence number, when the line carries them. */
  cisco: { seq: number | null; facility: string; severity: number; mnemonic: string } | null;
}

/** One SNMP variable binding, as text-friendly values (Counter64 and other big values as decimal strings, octet strings as text or hex). */
export interface Varbind {
  oid: string;
  type: string;
  value: string | number | null;
}

/** A received notification, in SNMPv2 form (a v1 trap is mapped per RFC 3584 §3.1). */
export interface TrapMessage {
  version: "v1" | "v2c" | "v3";
  pdu: "trap" | "inform";
  /** v1/v2c community the trap came with (never stored: it is a secret; the pipeline ignores it); v3 user name. */
  community: string | null;
  user: string | null;
  trap_oid: string;
  /** sysUpTime.0 of the sender in hundredths of a second, when given. */
  uptime: number | null;
  /** v1 only: agent-addr, enterprise, generic and specific trap numbers as received. */
  v1: { agent_addr: string; enterprise: string; generic: number; specific: number } | null;
  /** Variable bindings after sysUpTime.0 and snmpTrapOID.0. */
  varbinds: Varbind[];
}

/** What a receiver hands to the pipeline. */
export interface Inbound {
  kind: EventKind;
  transport: Transport;
  /** The listener's name (`syslog.udp`, `traps.udp`, or an ingest source id). */
  listener: string;
  /** The sender's address (IPv4, or IPv6 text; a v4-mapped IPv6 address is given as IPv4). */
  source_ip: string;
  received_at_ms: number;
  syslog: SyslogMessage | null;
  trap: TrapMessage | null;
  /**
   * When the message did not parse: syslog, the bytes as text (UTF-8, invalid sequences replaced, NULs escaped, cut at
   * the max size); traps, `0x` and the hex of the first 512 bytes, the community masked.
   */
  raw: string | null;
  /** True when the bytes did not parse as the stream's format (stored as raw, counted as malformed). */
  malformed: boolean;
  /**
   * The pool of the remote poller that received it (records a poller forwarded): attribution prefers a node of that
   * pool; null when the poller did not say (an older one: no preference). Absent for the core's own listeners, which
   * serve the embedded poller's pool.
   */
  pool?: string | null;
  /** Fields an HTTP ingest client sent with the event (stored under `data.fields`). */
  extra?: Record<string, unknown> | null;
  /**
   * The bytes as received (a syslog datagram or stream frame without its framing; a trap datagram), for a verbatim
   * relay by the forwarding tee. Never stored. Absent on HTTP ingest and on records a remote poller forwarded.
   */
  bytes?: Buffer;
  /**
   * UDP syslog: the mirror generation its listener's reader thread had when it read the datagram (the forwarding fast
   * path, SyslogMirror.set): the tee skips the destinations of that generation, which the reader relayed it to. 0 or
   * absent: relayed nowhere.
   */
  mirror_gen?: number;
}

/** Counters every listener keeps. */
export interface ListenerCounters {
  /** Messages read off the wire (including malformed ones). */
  received: number;
  /** Messages refused or lost here: over a limit, the pipeline's queue full, unknown community/user. */
  dropped: number;
  /** Messages that did not parse (stored as raw where possible). */
  malformed: number;
}

/** A bound listener: stop it with close(). */
export interface BoundListener {
  /** `syslog.udp`, `syslog.tcp`, `syslog.tls`, `traps.udp`. */
  name: string;
  stream: EventKind;
  protocol: "udp" | "tcp" | "tls";
  address: string;
  port: number;
  counters: ListenerCounters;
  /** A UDP syslog listener: relays every datagram as received to these targets from its reader thread (see UdpReader.mirror). */
  mirror?(targets: readonly MirrorTarget[], generation?: number): void;
  mirrorCounts?(): ReadonlyMap<string, MirrorCount>;
  close(): Promise<void>;
}

/** One event as the pipeline writes it. */
export interface EventRow {
  id: string;
  received_at_ms: number;
  kind: string;
  transport: string;
  listener: string;
  source_ip: string | null;
  source_id: string | null;
  node_id: string | null;
  folder_path: readonly string[];
  severity: number | null;
  facility: number | null;
  host: string | null;
  app: string | null;
  msgid: string | null;
  message: string;
  trap_oid: string | null;
  data: Record<string, unknown> | null;
  raw: string | null;
  malformed: boolean;
  action: string;
  rule_id: string | null;
}
