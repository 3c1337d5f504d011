/**
 * A thin promise layer over net-snmp: one session (one UDP socket) per poll of one agent,
 * v1/v2c/v3 from the node's credential, GET, and a multi-column table walk that uses
 * GetBulk (v2c, v3) or GetNext (v1). Values are turned into plain numbers, text and
 * exact decimal strings (Counter64 arrives as a Buffer and is converted without floats).
 */
import snmp from "net-snmp";
import type { SnmpCredential } from "../poller/types.js";
import { compareOids, isUnder } from "./oids.js";

export interface SnmpSessionOptions {
  /** Milliseconds to wait for one answer before re-sending. */
  timeoutMs: number;
  /** Re-sends after the first attempt (so a silent agent costs timeoutMs × (retries + 1)). */
  retries: number;
}

export interface WalkOptions {
  /** Upper bound of GetBulk max-repetitions. */
  maxRepetitions: number;
  /** Var-binds asked for per GetBulk (columns × repetitions); agents cap it anyway (snmpsim: 64). */
  maxVarbinds: number;
  /** Safety bound: a column stops after this many rows. */
  maxRowsPerColumn: number;
}

/** Why an exchange with the agent failed. */
export type SnmpFailure = "timeout" | "auth" | "unsupported" | "error";

export class SnmpError extends Error {
  constructor(
    readonly failure: SnmpFailure,
    message: string,
  ) {
    super(message);
    this.name = "SnmpError";
  }
}

/** One column's values by row index (the OID suffix after the column, e.g. "3" or "1.4"). */
export type Column = Map<string, snmp.Varbind>;

export interface WalkResult {
  /** The answers to the non-repeaters of the first request (GetNext semantics), or null where missing. */
  first: (snmp.Varbind | null)[];
  columns: Map<string, Column>;
  /** Set when an exchange after the first one failed: what was read before is kept. */
  error: SnmpError | null;
  /** Requests sent. */
  requests: number;
  /** When the first answer arrived (Unix ms). */
  answeredAt: number;
}

// AES-192 has no constant in net-snmp; its encryption table accepts another entry keyed by any
// id. Registered like AES-256 "Blumenthal" (draft-blumenthal-aes-usm, Net-SNMP's AES-192/AES-256).
const AES192_BLUMENTHAL = 10 as snmp.PrivProtocols;
let aes192Registered: boolean | null = null;

function registerAes192(): boolean {
  if (aes192Registered !== null) return aes192Registered;
  const algorithms = (snmp as unknown as { Encryption?: { algorithms?: Record<number, Record<string, unknown>> } }).Encryption?.algorithms;
  const aes256b = algorithms?.[snmp.PrivProtocols.aes256b];
  aes192Registered = !!(algorithms && aes256b);
  if (algorithms && aes256b && !algorithms[AES192_BLUMENTHAL]) {
    algorithms[AES192_BLUMENTHAL] = { ...aes256b, CRYPTO_ALGORITHM: "aes-192-cfb", KEY_LENGTH: 24 };
  }
  return aes192Registered;
}

const AUTH: Record<NonNullable<SnmpCredential["auth_protocol"]>, snmp.AuthProtocols> = {
  MD5: snmp.AuthProtocols.md5,
  SHA: snmp.AuthProtocols.sha,
  SHA224: snmp.AuthProtocols.sha224,
  SHA256: snmp.AuthProtocols.sha256,
  SHA384: snmp.AuthProtocols.sha384,
  SHA512: snmp.AuthProtocols.sha512,
};

function privProtocol(p: NonNullable<SnmpCredential["priv_protocol"]>): snmp.PrivProtocols {
  switch (p) {
    case "DES":
      return snmp.PrivProtocols.des;
    case "AES":
      return snmp.PrivProtocols.aes;
    case "AES192":
      if (!registerAes192()) throw new SnmpError("unsupported", "AES-192 privacy is not available in this net-snmp version");
      return AES192_BLUMENTHAL;
    case "AES256":
      // Net-SNMP's (and RFC draft's) AES-256 uses Blumenthal key localisation; Cisco's "AES-256-C" is Reeder (not offered).
      return snmp.PrivProtocols.aes256b;
    default:
      throw new SnmpError("unsupported", "unknown SNMPv3 privacy protocol");
  }
}

/** The net-snmp v3 user for a credential; throws SnmpError("unsupported") on an incomplete one. */
export function v3User(cred: SnmpCredential): snmp.User {
  if (!cred.user) throw new SnmpError("unsupported", "SNMPv3 credential without a user name");
  const level = cred.security_level ?? (cred.priv_protocol ? "authPriv" : cred.auth_protocol ? "authNoPriv" : "noAuthNoPriv");
  const user: snmp.User = { name: cred.user, level: snmp.SecurityLevel[level] };
  if (level === "authNoPriv" || level === "authPriv") {
    if (!cred.auth_key) throw new SnmpError("unsupported", "SNMPv3 credential without an authentication key");
    const auth = AUTH[cred.auth_protocol ?? "SHA"];
    if (auth === undefined) throw new SnmpError("unsupported", "unknown SNMPv3 authentication protocol");
    user.authProtocol = auth;
    user.authKey = cred.auth_key;
  }
  if (level === "authPriv") {
    if (!cred.priv_key) throw new SnmpError("unsupported", "SNMPv3 credential without a privacy key");
    user.privProtocol = privProtocol(cred.priv_protocol ?? "AES");
    user.privKey = cred.priv_key;
  }
  return user;
}

function classify(err: unknown): SnmpError {
  if (err instanceof SnmpError) return err;
  const e = err as { name?: string; message?: string; code?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : String(err);
  if (e?.name === "RequestTimedOutError") return new SnmpError("timeout", "no answer (request timed out)");
  if (e?.name === "ResponseInvalidError") {
    const code = e.code;
    if (code === snmp.ResponseInvalidCode.EAuthFailure || code === snmp.ResponseInvalidCode.ECouldNotDecrypt) {
      return new SnmpError("auth", "SNMPv3 authentication or decryption failed");
    }
    if (code === snmp.ResponseInvalidCode.ECommunityNoMatch) return new SnmpError("auth", "community mismatch");
  }
  // A Report PDU in answer to a v3 request: usmStatsWrongDigests, usmStatsUnknownUserNames, usmStatsDecryptionErrors, ...
  if (/report|usmStats|wrong ?digest|unknown ?user|decrypt/i.test(message)) return new SnmpError("auth", message);
  if (/unsupported|ERR_OSSL/i.test(message) || (typeof e?.code === "string" && e.code.startsWith("ERR_OSSL"))) {
    return new SnmpError("unsupported", `cipher unsupported by this runtime: ${message}`);
  }
  return new SnmpError("error", message);
}

const isTooBig = (err: unknown) =>
  (err as { name?: string; status?: number } | null)?.name === "RequestFailedError" && (err as { status: number }).status === snmp.ErrorStatus.TooBig;
const isNoSuchName = (err: unknown) =>
  (err as { name?: string; status?: number } | null)?.name === "RequestFailedError" && (err as { status: number }).status === snmp.ErrorStatus.NoSuchName;

/** One session with one agent. Always close() it. */
export class SnmpSession {
  private readonly session: snmp.Session;
  private closed = false;
  readonly version: SnmpCredential["version"];

  constructor(address: string, port: number, cred: SnmpCredential, opts: SnmpSessionOptions) {
    this.version = cred.version;
    const transport = address.includes(":") ? "udp6" : "udp4";
    const common = { port, retries: opts.retries, timeout: opts.timeoutMs, transport, backoff: 1 } as const;
    if (cred.version === "3") {
      this.session = snmp.createV3Session(address, v3User(cred), { ...common, version: snmp.Version3 });
    } else {
      this.session = snmp.createSession(address, cred.community ?? "public", {
        ...common,
        version: cred.version === "1" ? snmp.Version1 : snmp.Version2c,
      });
    }
    // A socket error must never crash the process; requests in flight fail on their own.
    this.session.on("error", () => undefined);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.session.close();
    } catch {
      // already closed
    }
  }

  /** GET: one entry per OID, null where the agent has no such object. */
  async get(oids: string[]): Promise<(snmp.Varbind | null)[]> {
    if (oids.length === 0) return [];
    try {
      const vbs = await this.call<snmp.Varbind[]>((cb) => this.session.get(oids, cb));
      return oids.map((_, i) => (vbs[i] && !snmp.isVarbindError(vbs[i]) ? vbs[i] : null));
    } catch (err) {
      // SNMPv1: one missing object fails the whole PDU; ask for each on its own.
      if (this.version === "1" && isNoSuchName(err) && oids.length > 1) {
        return Promise.all(oids.map(async (oid) => (await this.get([oid]))[0]));
      }
      if (this.version === "1" && isNoSuchName(err)) return [null];
      throw classify(err);
    }
  }

  /**
   * Walks table columns together. v2c/v3: GetBulk with every unfinished column in one PDU
   * (repetitions = maxVarbinds / columns), plus `firstNext` as non-repeaters of the first PDU.
   * v1: GetNext per column (columns in parallel), `firstNext` through GetNext.
   * The first exchange failing throws; a later one failing returns what was read with `error` set.
   */
  async walk(columns: string[], firstNext: string[], opts: WalkOptions): Promise<WalkResult> {
    return this.version === "1" ? this.walkV1(columns, firstNext, opts) : this.walkBulk(columns, firstNext, opts);
  }

  private async walkBulk(columnOids: string[], firstNext: string[], opts: WalkOptions): Promise<WalkResult> {
    const columns = new Map<string, Column>(columnOids.map((c) => [c, new Map()]));
    const cursor = new Map<string, string>(columnOids.map((c) => [c, c]));
    const active = [...columnOids];
    let first: (snmp.Varbind | null)[] = [];
    let requests = 0;
    let maxVarbinds = Math.max(1, opts.maxVarbinds);
    let columnsPerRequest = Math.max(1, active.length);
    let pendingFirst = firstNext.length > 0;
    let answeredOnce = false;
    let answeredAt = Date.now();

    while (active.length > 0 || pendingFirst) {
      const sent = active.slice(0, columnsPerRequest);
      const nonRep = pendingFirst ? firstNext : [];
      const reps = sent.length === 0 ? 0 : Math.max(1, Math.min(opts.maxRepetitions, Math.floor((maxVarbinds - nonRep.length) / sent.length)));
      let answer: (snmp.Varbind | snmp.Varbind[])[];
      try {
        requests++;
        answer = await this.call<(snmp.Varbind | snmp.Varbind[])[]>((cb) =>
          this.session.getBulk([...nonRep, ...sent.map((c) => cursor.get(c)!)], nonRep.length, reps, cb),
        );
      } catch (err) {
        if (isTooBig(err)) {
          // Ask for less: fewer repetitions first, then fewer columns per request.
          if (reps > 1) {
            maxVarbinds = Math.max(1, Math.floor((nonRep.length + reps * sent.length) / 2));
            continue;
          }
          if (sent.length > 1) {
            columnsPerRequest = Math.ceil(sent.length / 2);
            continue;
          }
        }
        if (!answeredOnce) throw classify(err);
        return { first, columns, error: classify(err), requests, answeredAt };
      }
      if (!answeredOnce) answeredAt = Date.now();
      answeredOnce = true;
      if (pendingFirst) {
        first = firstNext.map((_, i) => {
          const vb = answer[i] as snmp.Varbind | undefined;
          return vb && !Array.isArray(vb) && !snmp.isVarbindError(vb) ? vb : null;
        });
        pendingFirst = false;
      }
      let advanced = false;
      sent.forEach((column, i) => {
        const got = answer[nonRep.length + i];
        const rows = Array.isArray(got) ? got : got ? [got] : [];
        const values = columns.get(column)!;
        let done = false;
        for (const vb of rows) {
          const at = cursor.get(column)!;
          if (snmp.isVarbindError(vb) || !isUnder(column, vb.oid) || compareOids(vb.oid, at) <= 0) {
            done = true;
            break;
          }
          values.set(vb.oid.slice(column.length + 1), vb);
          cursor.set(column, vb.oid);
          advanced = true;
          if (values.size >= opts.maxRowsPerColumn) {
            done = true;
            break;
          }
        }
        if (done) active.splice(active.indexOf(column), 1);
      });
      // An agent that answers without moving any column forward would loop forever.
      if (!advanced && sent.length > 0 && sent.every((c) => active.includes(c))) {
        return { first, columns, error: new SnmpError("error", "agent returned no progress in a table walk"), requests, answeredAt };
      }
    }
    return { first, columns, error: null, requests, answeredAt };
  }

  private async walkV1(columnOids: string[], firstNext: string[], opts: WalkOptions): Promise<WalkResult> {
    let requests = 1;
    // The first exchange decides whether the agent answers at all.
    const first = await this.getNextOrNull(firstNext.length > 0 ? firstNext : ["1.3.6.1.2.1.1"]);
    const answeredAt = Date.now();
    const columns = new Map<string, Column>(columnOids.map((c) => [c, new Map()]));
    let error: SnmpError | null = null;
    await Promise.all(
      columnOids.map(async (column) => {
        let at = column;
        const values = columns.get(column)!;
        while (!error && values.size < opts.maxRowsPerColumn) {
          let vb: snmp.Varbind | null;
          try {
            requests++;
            [vb] = await this.getNextOrNull([at]);
          } catch (err) {
            error ??= classify(err);
            return;
          }
          if (!vb || !isUnder(column, vb.oid) || compareOids(vb.oid, at) <= 0) return;
          values.set(vb.oid.slice(column.length + 1), vb);
          at = vb.oid;
        }
      }),
    );
    return { first: firstNext.length > 0 ? first : [], columns, error, requests, answeredAt };
  }

  /** GetNext; null per OID past the end of the agent's MIB (v1 answers noSuchName for the whole PDU). */
  private async getNextOrNull(oids: string[]): Promise<(snmp.Varbind | null)[]> {
    try {
      const vbs = await this.call<snmp.Varbind[]>((cb) => this.session.getNext(oids, cb));
      return oids.map((_, i) => (vbs[i] && !snmp.isVarbindError(vbs[i]) ? vbs[i] : null));
    } catch (err) {
      if (isNoSuchName(err)) {
        if (oids.length === 1) return [null];
        return Promise.all(oids.map(async (oid) => (await this.getNextOrNull([oid]))[0]));
      }
      throw classify(err);
    }
  }

  private call<T>(start: (cb: (error: Error | null, result?: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        start((error, result) => (error ? reject(error) : resolve(result as T)));
      } catch (err) {
        reject(err);
      }
    }).catch((err: unknown) => {
      throw isTooBig(err) || isNoSuchName(err) ? err : classify(err);
    });
  }
}

/** Opens a session; a credential the library cannot use becomes an SnmpError. */
export function openSession(address: string, port: number, cred: SnmpCredential, opts: SnmpSessionOptions): SnmpSession {
  try {
    return new SnmpSession(address, port, cred, opts);
  } catch (err) {
    throw classify(err);
  }
}

// ---- value conversion -------------------------------------------------------------------------

const INTEGER_TYPES = new Set<number>([
  snmp.ObjectType.Integer,
  snmp.ObjectType.Counter,
  snmp.ObjectType.Gauge,
  snmp.ObjectType.TimeTicks,
  snmp.ObjectType.Counter64,
]);

/** A Counter64 (a Buffer of big-endian bytes in net-snmp), or any integer value, as an exact bigint. */
export function toBigInt(vb: snmp.Varbind | null | undefined): bigint | null {
  if (!vb || vb.value === null || vb.value === undefined) return null;
  const v = vb.value;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : null;
  if (Buffer.isBuffer(v)) {
    if (vb.type === snmp.ObjectType.Counter64) return v.length === 0 ? 0n : BigInt(`0x${v.toString("hex")}`);
    const text = v.toString("latin1").trim();
    return /^[0-9]{1,20}$/.test(text) ? BigInt(text) : null;
  }
  return null;
}

/** An unsigned counter as a decimal string (exact, also for Counter64). */
export function toCounterString(vb: snmp.Varbind | null | undefined): string | null {
  if (!vb || (vb.type !== undefined && !INTEGER_TYPES.has(vb.type))) return null;
  const n = toBigInt(vb);
  return n === null || n < 0n ? null : n.toString();
}

/** A numeric value (integers, counters, gauges, time ticks; text that reads as a number). */
export function toNumber(vb: snmp.Varbind | null | undefined): number | null {
  if (!vb || vb.value === null || vb.value === undefined) return null;
  const v = vb.value;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "bigint") return Number(v);
  if (Buffer.isBuffer(v)) {
    if (vb.type === snmp.ObjectType.Counter64) return Number(toBigInt(vb));
    const text = v.toString("latin1").trim();
    if (!/^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/.test(text)) return null;
    const n = Number(text);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** Text of an OCTET STRING (UTF-8, else Latin-1), without trailing NULs; OIDs and addresses as their string. */
export function toText(vb: snmp.Varbind | null | undefined): string | null {
  if (!vb || vb.value === null || vb.value === undefined) return null;
  const v = vb.value;
  if (Buffer.isBuffer(v)) {
    let s = v.toString("utf8");
    if (s.includes("\uFFFD")) s = v.toString("latin1");
    return s.replace(/\0+$/, "");
  }
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  return null;
}

/** Counter width of a value: 64 for Counter64, 32 otherwise. */
export function counterBits(vb: snmp.Varbind | null | undefined): 32 | 64 {
  return vb?.type === snmp.ObjectType.Counter64 ? 64 : 32;
}
