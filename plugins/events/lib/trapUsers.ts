import type { TrapAuthProtocol, TrapPrivProtocol, TrapUser } from "../traps/receiver.js";

/** A v3 trap user as the core hands it to a remote poller: the keys sealed with the core's secret key. */
export interface TrapUserWire {
  name: string;
  level: TrapUser["level"];
  auth_protocol: TrapAuthProtocol | null;
  auth_key_sealed: string | null;
  priv_protocol: TrapPrivProtocol | null;
  priv_key_sealed: string | null;
}

/** What seals and opens (the kernel's Secrets on the core, the poller's own on a poller). */
interface Sealer {
  seal(plaintext: string): string;
}
interface Opener {
  unseal(sealed: string): string;
}

export function sealTrapUsers(users: readonly TrapUser[], secrets: Sealer): TrapUserWire[] {
  return users.map((u) => ({
    name: u.name,
    level: u.level,
    auth_protocol: u.authProtocol ?? null,
    auth_key_sealed: u.authKey === undefined ? null : secrets.seal(u.authKey),
    priv_protocol: u.privProtocol ?? null,
    priv_key_sealed: u.privKey === undefined ? null : secrets.seal(u.privKey),
  }));
}

/**
 * The users a poller's trap listener takes, from the core's answer. Throws the opener's error when a key cannot be
 * opened (the poller's NMS_SECRET_KEY is not the core's); entries of another shape are left out.
 */
export function openTrapUsers(wire: unknown, secrets: Opener): TrapUser[] {
  if (!Array.isArray(wire)) return [];
  const out: TrapUser[] = [];
  for (const w of wire as Partial<TrapUserWire>[]) {
    if (!w || typeof w.name !== "string" || (w.level !== "noAuthNoPriv" && w.level !== "authNoPriv" && w.level !== "authPriv")) continue;
    out.push({
      name: w.name,
      level: w.level,
      ...(w.auth_protocol ? { authProtocol: w.auth_protocol } : {}),
      ...(typeof w.auth_key_sealed === "string" ? { authKey: secrets.unseal(w.auth_key_sealed) } : {}),
      ...(w.priv_protocol ? { privProtocol: w.priv_protocol } : {}),
      ...(typeof w.priv_key_sealed === "string" ? { privKey: secrets.unseal(w.priv_key_sealed) } : {}),
    });
  }
  return out;
}
