/**
 * A self-signed certificate for the syslog TLS listener when the operator gives none: made once in
 * `dir` (pure JS, no `openssl` program needed) and reused on later starts, so senders that pin it
 * keep working across restarts.
 */
import { X509Certificate, createPrivateKey } from "node:crypto";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generate } from "selfsigned";

export interface SelfSignedPair {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
}

const CERT_FILE = "syslog-tls.crt";
const KEY_FILE = "syslog-tls.key";
const COMMON_NAME = "nms-core syslog";
const VALID_YEARS = 10;

/**
 * Returns the pair stored in `dir`, making a new one when either file is missing, unreadable, the two do
 * not belong together (e.g. two starts raced) or the certificate has expired.
 */
export async function ensureSelfSignedPair(dir: string): Promise<SelfSignedPair> {
  const certPath = join(dir, CERT_FILE);
  const keyPath = join(dir, KEY_FILE);
  const existing = await readPair(certPath, keyPath);
  if (existing) return existing;

  await mkdir(dir, { recursive: true, mode: 0o700 });
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(notBeforeDate);
  notAfterDate.setUTCFullYear(notAfterDate.getUTCFullYear() + VALID_YEARS);
  const pems = await generate([{ name: "commonName", value: COMMON_NAME }], {
    keyType: "rsa",
    keySize: 2048,
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  // Written under temporary names then renamed: a crash never leaves half a pair behind.
  await writeFile(`${keyPath}.tmp`, pems.private, { mode: 0o600 });
  await chmod(`${keyPath}.tmp`, 0o600);
  await writeFile(`${certPath}.tmp`, pems.cert, { mode: 0o644 });
  await rename(`${keyPath}.tmp`, keyPath);
  await rename(`${certPath}.tmp`, certPath);
  return { cert: pems.cert, key: pems.private, certPath, keyPath };
}

async function readPair(certPath: string, keyPath: string): Promise<SelfSignedPair | null> {
  try {
    const [cert, key] = await Promise.all([readFile(certPath, "utf8"), readFile(keyPath, "utf8")]);
    const x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key))) return null;
    if (Date.parse(x509.validTo) <= Date.now()) return null;
    return { cert, key, certPath, keyPath };
  } catch {
    return null;
  }
}
