/**
 * A bounded cache of USM localized keys for the trap receiver.
 *
 * net-snmp localizes a v3 user's keys to the sender's engine ID (RFC 3414 §2.6) in
 * `Authentication.passwordToKey` and memoizes every result, forever, in the module-global object
 * `Authentication.authToKeyCache` keyed by protocol + password + engine ID. A trap's authoritative
 * engine is its sender, so anyone who knows a user name can grow that object without bound by
 * sending traps with fresh engine IDs (each one also costs a 1 MB hash before the digest check).
 *
 * While a receiver handles a datagram (synchronously, inside `run`), `passwordToKey` is answered
 * from that receiver's cache instead: the engine-independent master key Ku (the 1 MB hash) is kept
 * per password, the localized key Kul = H(Ku | engineID | Ku) per engine ID in an LRU map of at most
 * `maxEntries` entries, and net-snmp's global object is not touched. Outside `run` (the polling
 * plugin's sessions) net-snmp's own function answers, unchanged. node_modules is not edited.
 */
import { createHash } from "node:crypto";
import snmp from "net-snmp";

type PasswordToKey = (authProtocol: number, password: string | Buffer, engineID: Buffer) => Buffer;

interface AuthenticationInternals {
  HMAC_BUFFER_SIZE: number;
  algorithms: Record<number, { CRYPTO_ALGORITHM: string } | undefined>;
  authToKeyCache: Record<string, Buffer>;
  passwordToKey: PasswordToKey;
}

const auth = snmp.Authentication as unknown as AuthenticationInternals;
/** The cache of the receiver handling a datagram right now (handling is synchronous), if any. */
const scope: { active: LocalizedKeyCache | null } = { active: null };
let hooked = false;

/** Routes net-snmp's key localization to the active cache, once per process. */
function hook(): void {
  if (hooked) return;
  hooked = true;
  const original = auth.passwordToKey;
  auth.passwordToKey = function (authProtocol, password, engineID) {
    const cache = scope.active;
    if (!cache || typeof password !== "string" || !Buffer.isBuffer(engineID)) return original.call(this, authProtocol, password, engineID);
    return cache.localize(authProtocol, password, engineID);
  };
}

/** net-snmp's global (unbounded) cache, for tests that check the receiver does not add to it. */
export function netSnmpGlobalKeyCount(): number {
  return Object.keys(auth.authToKeyCache).length;
}

export class LocalizedKeyCache {
  private readonly localized = new Map<string, Buffer>();
  private readonly masters = new Map<string, Buffer>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError("engineIdCacheSize must be a positive integer");
    hook();
  }

  /** Localized keys held (one per engine ID and user key). */
  get size(): number {
    return this.localized.size;
  }

  /** Runs `fn` (net-snmp's synchronous handling of one datagram) with key localization served from this cache. */
  run<T>(fn: () => T): T {
    const previous = scope.active;
    scope.active = this;
    try {
      return fn();
    } finally {
      scope.active = previous;
    }
  }

  /** RFC 3414 A.2 password-to-key, localized to `engineID` (byte-for-byte what net-snmp computes). */
  localize(authProtocol: number, password: string, engineID: Buffer): Buffer {
    const masterKey = `${authProtocol}\u0000${password}`;
    const key = `${masterKey}\u0000${engineID.toString("latin1")}`;
    const hit = this.localized.get(key);
    if (hit) {
      this.localized.delete(key); // LRU: move to the end
      this.localized.set(key, hit);
      return hit;
    }
    const algorithm = auth.algorithms[authProtocol]?.CRYPTO_ALGORITHM;
    if (!algorithm) throw new Error(`unknown USM authentication protocol ${authProtocol}`);
    let ku = this.masters.get(masterKey);
    if (!ku) {
      ku = createHash(algorithm).update(Buffer.alloc(auth.HMAC_BUFFER_SIZE, password)).digest();
      this.masters.set(masterKey, ku);
    }
    const kul = createHash(algorithm).update(ku).update(engineID).update(ku).digest();
    if (this.localized.size >= this.maxEntries) this.localized.delete(this.localized.keys().next().value as string);
    this.localized.set(key, kul);
    return kul;
  }
}
