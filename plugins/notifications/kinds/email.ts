/**
 * `email`: sends a plain-text mail over SMTP with nodemailer, one connection per send. `security` is `starttls`
 * (upgrade required, the default, port 587), `tls` (implicit TLS, SMTPS, usually port 465) or `none` (no TLS at all,
 * for a relay on a trusted network). AUTH (PLAIN/LOGIN, whatever the server offers) when `username` is set.
 * `ca_cert` trusts a private CA; `reject_unauthorized: false` turns certificate checks off.
 *
 * Each mail carries `Message-ID: <idempotency key@sender's domain>`, `X-NMS-Idempotency-Key` (one per delivery: a
 * repeat after a lost answer carries the same one) and `X-NMS-Dedup-Key` (one per incident).
 *
 * A failure's message names the SMTP reply code, or the kind of network failure, and never the host, the user name
 * or the password; 5xx replies end the delivery, 4xx replies, network failures and timeouts are retried.
 */
import { isIP } from "node:net";
import nodemailer from "nodemailer";
import { DeliveryError, type ChannelKind, type OutboundNotification } from "../contract.js";
import { namedTextTemplates } from "../lib/builtinTemplates.js";

/** An address without a display name: no spaces, angle brackets, quotes, commas or line breaks. */
const EMAIL_PATTERN = '^[^\\s@<>()\\[\\],;:"\\\\]+@[^\\s@<>()\\[\\],;:"\\\\.]+(?:\\.[^\\s@<>()\\[\\],;:"\\\\.]+)+$';
/** A DNS name (labels of letters, digits, hyphens) or an IPv4 address; IPv6 literals are allowed too (checked in validate). */
const HOST_PATTERN =
  "^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$";
const PEM_CERT = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/;

const email = { type: "string", pattern: EMAIL_PATTERN, maxLength: 254 } as const;

export interface EmailConfig {
  host: string;
  port: number;
  security: "none" | "starttls" | "tls";
  username?: string | null;
  password?: string | null;
  from: string;
  to: string[];
  ca_cert?: string | null;
  reject_unauthorized: boolean;
  timeout_ms: number;
}

/** The text body: the rendered one, else the alert as JSON. */
export function emailText(n: OutboundNotification): string {
  return n.body ?? JSON.stringify(n.alert, null, 2);
}

/** Header values are one line; nodemailer encodes non-ASCII. */
function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, " ");
}

const TLS_CODES = /^(ETLS|EPROTO|ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|ERR_OSSL_)/;

const NETWORK: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EHOSTDOWN: "host unreachable",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS lookup failed)",
  EADDRNOTAVAIL: "address not available",
};

interface MailError extends Error {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
}

/**
 * The server's reply text after its code, on one line, without the secrets and the host, at most 160 characters;
 * enough to tell "mailbox full" from "user unknown".
 */
function replyText(response: string | undefined, secrets: string[]): string {
  if (!response) return "";
  let text = response
    .replace(/^\d{3}[ -]?/, "")
    .replace(/\s+/g, " ")
    .trim();
  for (const s of secrets) {
    text = text.replace(new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"), "[redacted]");
  }
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** Maps a nodemailer failure to a DeliveryError whose message holds no host, user name or password. */
export function smtpFailure(err: unknown, signal: AbortSignal, secrets: string[]): DeliveryError {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    return reason?.name === "TimeoutError"
      ? new DeliveryError("timeout", "timeout", { retryable: true })
      : new DeliveryError("aborted", "aborted", { retryable: true });
  }
  const e = (err ?? {}) as MailError;
  const code = e.code ?? "";
  const original = e.originalCode ?? "";
  const reply = typeof e.responseCode === "number" && e.responseCode >= 200 && e.responseCode <= 599 ? e.responseCode : null;
  const text = replyText(e.response, secrets);
  const withText = (s: string) => (text ? `${s}: ${text}` : s);

  if (code === "EAUTH") {
    if (reply !== null && reply < 500) return new DeliveryError(withText(`SMTP ${reply} authentication failed temporarily`), "smtp_auth", { retryable: true });
    if (reply !== null) return new DeliveryError(`SMTP ${reply} authentication failed`, "smtp_auth", { retryable: false });
    return new DeliveryError("SMTP authentication failed (no usable AUTH mechanism or credentials)", "smtp_auth", { retryable: false });
  }
  // 530 to MAIL FROM: the server wants AUTH (no username configured, or it needs TLS first).
  if (reply === 530) return new DeliveryError("SMTP 530 authentication required", "smtp_auth", { retryable: false });
  if (code === "ENOAUTH") return new DeliveryError("SMTP authentication failed (no credentials)", "smtp_auth", { retryable: false });
  if (code === "ETIMEDOUT" || original === "ETIMEDOUT") return new DeliveryError("timeout", "timeout", { retryable: true });
  if (reply !== null && reply >= 400 && (code === "EENVELOPE" || code === "EMESSAGE" || code === "EPROTOCOL" || code === "ECONNECTION" || code === "ETLS")) {
    const what =
      e.command === "RCPT TO"
        ? "recipient rejected"
        : e.command === "MAIL FROM"
          ? "sender rejected"
          : e.command === "DATA"
            ? "message rejected"
            : e.command === "STARTTLS"
              ? "STARTTLS refused"
              : "server refused the session";
    if (code === "ETLS") return new DeliveryError(withText(`SMTP ${reply} ${what}`), "tls", { retryable: reply < 500 });
    return reply < 500
      ? new DeliveryError(withText(`SMTP ${reply} ${what} temporarily`), "smtp_deferred", { retryable: true })
      : new DeliveryError(withText(`SMTP ${reply} ${what}`), "smtp_rejected", { retryable: false });
  }
  const net = NETWORK[original] ?? NETWORK[code];
  if (net) return new DeliveryError(net, "connect", { retryable: true });
  if (code === "ETLS" || TLS_CODES.test(original) || TLS_CODES.test(code) || /certificate|ssl|tls/i.test(e.message ?? "")) {
    const why = `${original} ${code} ${e.message ?? ""}`;
    const detail = /ALTNAME|HOSTNAME|does not match/i.test(why)
      ? " (certificate does not match the host)"
      : /expired/i.test(why)
        ? " (certificate expired)"
        : /self[- ]signed|unable to (get|verify)|not trusted|CERT_|SELF_SIGNED|UNABLE_TO/i.test(why)
          ? " (certificate not trusted)"
          : "";
    // The server hung up in the middle of the handshake: may pass on a retry (a certificate or protocol mismatch will not).
    if (!detail && code === "ETLS" && /closed unexpectedly/i.test(e.message ?? ""))
      return new DeliveryError("TLS handshake failed (connection closed)", "tls", { retryable: true });
    return new DeliveryError(`TLS handshake failed${detail}`, "tls", { retryable: false });
  }
  if (code === "EDNS") return new DeliveryError("host not found (DNS lookup failed)", "connect", { retryable: true });
  if (code === "ECONNECTION" || code === "ESOCKET") return new DeliveryError("connection closed unexpectedly", "connect", { retryable: true });
  if (code === "EPROTOCOL") return new DeliveryError("unexpected SMTP reply", "smtp_protocol", { retryable: true });
  if (code === "EABORT" || e.name === "AbortError") return new DeliveryError("aborted", "aborted", { retryable: true });
  return new DeliveryError(`SMTP send failed${code ? ` (${code})` : ""}`, "smtp", { retryable: true });
}

/** The SMTP transport of an email channel's config (one connection per send: close it after). Also used by ReportDeliveryService. */
export function emailTransport(c: EmailConfig) {
  const security = c.security ?? "starttls";
  const timeout = c.timeout_ms ?? 10000;
  return nodemailer.createTransport({
    host: c.host,
    port: c.port ?? 587,
    secure: security === "tls",
    requireTLS: security === "starttls",
    ignoreTLS: security === "none",
    ...(typeof c.username === "string" ? { auth: { user: c.username, pass: c.password ?? "" } } : {}),
    tls: { ...(typeof c.ca_cert === "string" ? { ca: c.ca_cert } : {}), rejectUnauthorized: c.reject_unauthorized !== false },
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    dnsTimeout: timeout,
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
    debug: false,
  });
}

export const emailKind: ChannelKind = {
  kind: "email",
  description: "Send a plain-text mail over SMTP (STARTTLS, implicit TLS or none; optional AUTH) to up to 50 addresses",
  configSchema: {
    type: "object",
    additionalProperties: false,
    required: ["host", "from", "to"],
    properties: {
      host: { type: "string", minLength: 1, maxLength: 253, pattern: HOST_PATTERN },
      port: { type: "integer", minimum: 1, maximum: 65535, default: 587 },
      security: { type: "string", enum: ["none", "starttls", "tls"], default: "starttls" },
      username: { type: ["string", "null"], minLength: 1, maxLength: 512 },
      password: { type: ["string", "null"], minLength: 1, maxLength: 4096 },
      from: email,
      to: { type: "array", minItems: 1, maxItems: 50, uniqueItems: true, items: email },
      ca_cert: { type: ["string", "null"], minLength: 1, maxLength: 65536 },
      reject_unauthorized: { type: "boolean", default: true },
      timeout_ms: { type: "integer", minimum: 1000, maximum: 60000, default: 10000 },
    },
  },
  secretFields: ["password"],
  validate(config) {
    const host = String(config.host ?? "");
    if (host.includes(":") && isIP(host) !== 6) throw new Error("config.host must be a host name or an IP address.");
    if (typeof config.password === "string" && typeof config.username !== "string") throw new Error("config.password needs config.username.");
    if (typeof config.ca_cert === "string" && !PEM_CERT.test(config.ca_cert))
      throw new Error("config.ca_cert must be a PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----).");
  },
  opensIncidents: false,
  builtinTemplates: namedTextTemplates(),
  async send(n, channel, signal) {
    const c = channel.config as unknown as EmailConfig;
    const secrets = [c.password, c.username, c.host].filter((s): s is string => typeof s === "string" && s.length > 0);
    if (signal.aborted) throw smtpFailure(signal.reason, signal, secrets);
    const transport = emailTransport(c);
    const domain = c.from.slice(c.from.lastIndexOf("@") + 1);
    try {
      await transport.sendMail({
        from: c.from,
        to: c.to,
        subject: oneLine(n.subject),
        text: emailText(n),
        messageId: `<${oneLine(n.idempotencyKey).replace(/[<>@\s]/g, "_")}@${domain}>`,
        headers: { "X-NMS-Idempotency-Key": oneLine(n.idempotencyKey), "X-NMS-Dedup-Key": oneLine(n.dedupKey) },
        signal,
      });
    } catch (err) {
      throw smtpFailure(err, signal, secrets);
    } finally {
      transport.close();
    }
    return { status: null };
  },
};
