import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";

const N = 16384;
const R = 8;
const P = 1;
const KEYLEN = 64;

function scryptAsync(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEYLEN, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url parts); node's built-in scrypt, no native addon. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, N, R, P);
  return ["scrypt", N, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split("$");
  if (alg !== "scrypt" || !salt || !hash) return false;
  const key = await scryptAsync(password, Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p));
  const expected = Buffer.from(hash, "base64url");
  return expected.length === key.length && timingSafeEqual(expected, key);
}

/** A hash that verifies nothing, so an unknown username costs the same time as a wrong password. */
export const DUMMY_HASH = `scrypt$${N}$${R}$${P}$${randomBytes(16).toString("base64url")}$${randomBytes(KEYLEN).toString("base64url")}`;

/** Bearer tokens are 256-bit random strings; only their SHA-256 is stored (they are not guessable, so no slow hash is needed). */
export function newToken(prefix: "nmss" | "nmst"): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

export function tokenHash(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

export function randomPassword(): string {
  return randomBytes(18).toString("base64url");
}
