/**
 * Reads the LLDP and CDP tables of one agent with net-snmp: a GET of the local scalars, then a subtree walk of each
 * table (GetBulk on v2c/v3, GetNext on v1). Polling's session layer is its own (plugins share only contracts), and
 * this needs no more than net-snmp's walk. One UDP socket per node, closed at the end.
 */
import snmp from "net-snmp";
import type { RevealedCredential } from "../../inventory/contract.js";
import { SCALARS, SUBTREES, type RawWalk } from "./mibs.js";

export interface WalkSettings {
  timeoutMs: number;
  retries: number;
  maxRepetitions: number;
  /** Var-binds one node may answer in all (a guard against an agent that never ends a table). */
  maxVarbinds: number;
}

/** Why a walk failed: no answer, refused credentials, or anything else. */
export class WalkError extends Error {
  constructor(
    readonly kind: "timeout" | "auth" | "no_credential" | "error",
    message: string,
  ) {
    super(message);
    this.name = "WalkError";
  }
}

const AUTH: Record<string, snmp.AuthProtocols> = {
  MD5: snmp.AuthProtocols.md5,
  SHA: snmp.AuthProtocols.sha,
  SHA224: snmp.AuthProtocols.sha224,
  SHA256: snmp.AuthProtocols.sha256,
  SHA384: snmp.AuthProtocols.sha384,
  SHA512: snmp.AuthProtocols.sha512,
};
const PRIV: Record<string, snmp.PrivProtocols> = { DES: snmp.PrivProtocols.des, AES: snmp.PrivProtocols.aes, AES256: snmp.PrivProtocols.aes256b };

function openSession(address: string, port: number, cred: RevealedCredential, s: WalkSettings): snmp.Session {
  const transport = address.includes(":") ? "udp6" : "udp4";
  const common = { port, retries: s.retries, timeout: s.timeoutMs, transport, backoff: 1 } as const;
  if (cred.kind === "snmp_v2c") {
    if (!cred.secrets.community) throw new WalkError("no_credential", "SNMP credential without a community");
    return snmp.createSession(address, cred.secrets.community, { ...common, version: snmp.Version2c });
  }
  if (cred.kind !== "snmp_v3") throw new WalkError("no_credential", "the node's credential is not an SNMP one");
  const st = cred.settings as Partial<Record<string, string>>;
  if (!st.user) throw new WalkError("no_credential", "SNMPv3 credential without a user name");
  const level = (st.security_level ?? (st.priv_protocol ? "authPriv" : st.auth_protocol ? "authNoPriv" : "noAuthNoPriv")) as keyof typeof snmp.SecurityLevel;
  const user: snmp.User = { name: st.user, level: snmp.SecurityLevel[level] };
  if (level !== "noAuthNoPriv") {
    const auth = AUTH[st.auth_protocol ?? "SHA"];
    if (auth === undefined || !cred.secrets.auth_key) throw new WalkError("no_credential", "SNMPv3 authentication this walker cannot use");
    user.authProtocol = auth;
    user.authKey = cred.secrets.auth_key;
  }
  if (level === "authPriv") {
    const priv = PRIV[st.priv_protocol ?? "AES"];
    if (priv === undefined || !cred.secrets.priv_key) throw new WalkError("no_credential", "SNMPv3 privacy this walker cannot use");
    user.privProtocol = priv;
    user.privKey = cred.secrets.priv_key;
  }
  return snmp.createV3Session(address, user, { ...common, version: snmp.Version3 });
}

function classify(err: unknown): WalkError {
  if (err instanceof WalkError) return err;
  const e = err as { name?: string; message?: string; code?: unknown } | null;
  if (e?.name === "RequestTimedOutError") return new WalkError("timeout", "no answer (request timed out)");
  const message = typeof e?.message === "string" ? e.message : String(err);
  if (e?.name === "ResponseInvalidError" || /report|usmStats|wrong ?digest|unknown ?user|decrypt|community/i.test(message)) {
    return new WalkError("auth", "the agent refused the credential");
  }
  return new WalkError("error", message);
}

function valueOf(vb: snmp.Varbind): RawWalk extends Map<string, infer V> ? V : never {
  const v = vb.value as unknown;
  if (Buffer.isBuffer(v) || typeof v === "number" || typeof v === "bigint" || typeof v === "string") return v;
  return null;
}

/** The var-binds of the LLDP and CDP tables (and the local names they refer to) of the agent at address:port. */
export async function walkNeighbors(address: string, port: number, cred: RevealedCredential, s: WalkSettings): Promise<RawWalk> {
  const session = openSession(address, port, cred, s);
  session.on("error", () => undefined);
  const raw: RawWalk = new Map();
  try {
    const scalars = await new Promise<snmp.Varbind[]>((resolve, reject) => session.get(SCALARS, (err, vbs) => (err ? reject(err) : resolve(vbs ?? [])))).catch(
      (err: unknown) => {
        // v1 answers noSuchName for the whole PDU when one object is missing: the tables still tell the neighbours.
        if ((err as { name?: string })?.name === "RequestFailedError") return [] as snmp.Varbind[];
        throw err;
      },
    );
    for (const vb of scalars) if (!snmp.isVarbindError(vb)) raw.set(vb.oid, valueOf(vb));
    for (const root of SUBTREES) {
      await new Promise<void>((resolve, reject) => {
        session.subtree(
          root,
          s.maxRepetitions,
          (vbs) => {
            for (const vb of vbs) {
              if (snmp.isVarbindError(vb)) continue;
              raw.set(vb.oid, valueOf(vb));
            }
            if (raw.size > s.maxVarbinds) return true; // stops this subtree; the rest is skipped below
          },
          (err) => (err ? reject(err) : resolve()),
        );
      });
      if (raw.size > s.maxVarbinds) throw new WalkError("error", `more than ${s.maxVarbinds} var-binds`);
    }
    return raw;
  } catch (err) {
    throw classify(err);
  } finally {
    try {
      session.close();
    } catch {
      // already closed
    }
  }
}
