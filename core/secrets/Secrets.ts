import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";

const PREFIX = "sealed:v1:";

export class SecretKeyError extends Error {}

function parseKey(raw: string, where: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32) throw new SecretKeyError(`${where} must hold 32 bytes (64 hex characters or base64)`);
  return key;
}

/**
 * Seals secrets at rest with AES-256-GCM. The key comes from NMS_SECRET_KEY, or
 * from `<dataDir>/secret.key`, created once with mode 0600. A sealed value is
 * `sealed:v1:<base64(iv | tag | ciphertext)>`; it never leaves the process unsealed
 * except to the code that asked for it.
 */
export class Secrets {
  private constructor(private readonly key: Buffer) {}

  static fromConfig(secretKey: string | null, dataDir: string): Secrets {
    if (secretKey) return new Secrets(parseKey(secretKey, "NMS_SECRET_KEY"));
    const file = join(dataDir, "secret.key");
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
    }
    chmodSync(file, 0o600);
    return new Secrets(parseKey(readFileSync(file, "utf8"), file));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64");
  }

  unseal(sealed: string): string {
    if (!Secrets.isSealed(sealed)) throw new SecretKeyError("value is not sealed");
    const raw = Buffer.from(sealed.slice(PREFIX.length), "base64");
    if (raw.length < 28) throw new SecretKeyError("sealed value is truncated");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretKeyError("sealed value cannot be opened with this key (wrong NMS_SECRET_KEY or secret.key?)");
    }
  }

  static isSealed(value: unknown): value is string {
    return typeof value === "string" && value.startsWith(PREFIX);
  }
}
