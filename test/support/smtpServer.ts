/**
 * A real SMTP server for email tests (the `smtp-server` package), on 127.0.0.1 and a free port.
 *
 * Modes:
 *   plain     no TLS, no AUTH (STARTTLS and AUTH are not offered)
 *   starttls  STARTTLS offered; with `auth`, AUTH PLAIN/LOGIN is required before MAIL FROM and only after STARTTLS
 *   tls       implicit TLS (SMTPS) from the first byte; with `auth`, AUTH PLAIN/LOGIN is required
 * TLS uses a self-signed certificate for 127.0.0.1/localhost made at run time with `openssl` (httpTarget's helper);
 * `ca` is its PEM, for a client to trust.
 *
 * Every accepted message is recorded in `messages` (envelope, raw text, headers, subject, text body, the user that
 * logged in, whether the session was TLS). Failures on demand: `rejectAuth()` (535), `rejectRecipient(addr, code)`,
 * `rejectData(code)`, each with any reply code (5xx permanent, 4xx temporary); `reset()` clears them.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { selfSignedCert, type SelfSignedCert } from "./httpTarget.js";

export type SmtpMode = "plain" | "starttls" | "tls";

export interface SmtpServerOptions {
  mode?: SmtpMode;
  /** Credentials AUTH accepts (starttls and tls modes); when set, AUTH is required. */
  auth?: { username: string; password: string };
  /** A certificate to serve (default: a new self-signed one). */
  cert?: SelfSignedCert;
}

export interface ReceivedMessage {
  envelope: { mailFrom: string | null; rcptTo: string[] };
  raw: string;
  /** Header names lower-cased; unfolded values; repeated headers keep every value. */
  headers: Record<string, string[]>;
  subject: string | null;
  /** The body with the transfer encoding (7bit, quoted-printable or base64) undone, CRLF turned into LF. */
  text: string;
  user: string | null;
  secure: boolean;
}

export interface ReplyFailure {
  code: number;
  message: string;
}

export interface SmtpTestServer {
  host: "127.0.0.1";
  port: number;
  mode: SmtpMode;
  /** The certificate's PEM (trust it as a CA), or null in plain mode. */
  ca: string | null;
  messages: ReceivedMessage[];
  /** Failed AUTH attempts (user names tried). */
  authFailures: string[];
  /** Refuses every AUTH with this reply (default 535). */
  rejectAuth(code?: number, message?: string): void;
  /** Refuses RCPT TO for this address (case-insensitive) with this reply. */
  rejectRecipient(address: string, code: number, message?: string): void;
  /** Refuses the message after DATA with this reply. */
  rejectData(code: number, message?: string): void;
  reset(): void;
  /** Resolves when at least `count` messages have arrived (rejects after `timeoutMs`). */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  close(): Promise<void>;
}

function replyError(failure: ReplyFailure): Error {
  return Object.assign(new Error(failure.message), { responseCode: failure.code });
}

/** Splits a raw message into headers and body; minimal RFC 5322/2045 parsing, enough for tests. */
export function parseMessage(raw: string): { headers: Record<string, string[]>; subject: string | null; text: string } {
  const normalized = raw.replace(/\r\n/g, "\n");
  const split = normalized.indexOf("\n\n");
  const head = split < 0 ? normalized : normalized.slice(0, split);
  const body = split < 0 ? "" : normalized.slice(split + 2);
  const headers: Record<string, string[]> = {};
  for (const line of head.replace(/\n[ \t]+/g, " ").split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  const encoding = (headers["content-transfer-encoding"]?.[0] ?? "7bit").toLowerCase();
  let text: string;
  if (encoding === "base64") text = Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  else if (encoding === "quoted-printable") text = decodeQuotedPrintable(body);
  else text = body;
  const subject = headers.subject?.[0];
  return { headers, subject: subject === undefined ? null : decodeEncodedWords(subject), text: text.replace(/\r\n/g, "\n").replace(/\n$/, "") };
}

function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = [];
  const soft = body.replace(/=\n/g, "");
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!;
    if (c === "=" && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** RFC 2047 encoded words (=?utf-8?Q?…?= and =?utf-8?B?…?=), as nodemailer writes non-ASCII subjects. */
function decodeEncodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === "B" ? Buffer.from(data, "base64").toString("utf8") : decodeQuotedPrintable(data.replace(/_/g, " ")),
    );
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<SmtpTestServer> {
  const mode = options.mode ?? "plain";
  const cert = mode === "plain" ? null : (options.cert ?? selfSignedCert());
  const messages: ReceivedMessage[] = [];
  const authFailures: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let authFailure: ReplyFailure | null = null;
  let dataFailure: ReplyFailure | null = null;
  const recipientFailures = new Map<string, ReplyFailure>();

  const serverOptions: SMTPServerOptions = {
    logger: false,
    disableReverseLookup: true,
    name: "smtp.test.invalid",
    banner: "nms-core test SMTP server",
    closeTimeout: 1000,
    size: 10 * 1024 * 1024,
    secure: mode === "tls",
    authMethods: ["PLAIN", "LOGIN"],
    authOptional: !options.auth,
    allowInsecureAuth: false,
    disabledCommands: mode === "plain" ? ["STARTTLS", "AUTH"] : options.auth ? [] : ["AUTH"],
    ...(cert ? { key: cert.key, cert: cert.cert } : {}),
    onAuth(auth, _session, callback) {
      const expected = options.auth;
      if (authFailure) {
        authFailures.push(auth.username ?? "");
        return callback(replyError(authFailure));
      }
      if (expected && auth.username === expected.username && auth.password === expected.password) return callback(null, { user: auth.username });
      authFailures.push(auth.username ?? "");
      return callback(replyError({ code: 535, message: "5.7.8 Authentication credentials invalid" }));
    },
    onRcptTo(address, _session, callback) {
      const failure = recipientFailures.get(address.address.toLowerCase());
      if (failure) return callback(replyError(failure));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", (err) => callback(err));
      stream.on("end", () => {
        if (dataFailure) return callback(replyError(dataFailure));
        const raw = Buffer.concat(chunks).toString("utf8");
        const parsed = parseMessage(raw);
        const mailFrom = session.envelope.mailFrom;
        messages.push({
          envelope: { mailFrom: mailFrom ? mailFrom.address : null, rcptTo: session.envelope.rcptTo.map((r) => r.address) },
          raw,
          ...parsed,
          user: typeof session.user === "string" ? session.user : null,
          secure: session.secure,
        });
        for (const w of [...waiters]) {
          if (messages.length >= w.count) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        callback();
      });
    },
  };

  const server = new SMTPServer(serverOptions);
  // Client disconnects and handshake failures surface here; they are the client's business in these tests.
  server.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.server.off("error", reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    host: "127.0.0.1",
    port,
    mode,
    ca: cert ? cert.cert : null,
    messages,
    authFailures,
    rejectAuth(code = 535, message = "5.7.8 Authentication credentials invalid") {
      authFailure = { code, message };
    },
    rejectRecipient(address, code, message = code >= 500 ? "5.1.1 Mailbox unavailable" : "4.2.1 Mailbox busy, try again later") {
      recipientFailures.set(address.toLowerCase(), { code, message });
    },
    rejectData(code, message = code >= 500 ? "5.6.0 Message refused" : "4.3.0 Temporary failure, try again later") {
      dataFailure = { code, message };
    },
    reset() {
      authFailure = null;
      dataFailure = null;
      recipientFailures.clear();
    },
    waitForMessages(count, timeoutMs = 5000) {
      if (messages.length >= count) return Promise.resolve(messages);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} message(s), got ${messages.length}`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(messages);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
