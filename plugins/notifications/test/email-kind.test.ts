// The email kind against a real SMTP server (smtp-server on loopback): plain, STARTTLS with AUTH, implicit TLS; the
// failures a mail server answers (auth, 5xx and 4xx replies), network and TLS failures; and its config checks.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Ajv } from "ajv";
import { createServer, type AddressInfo, type Server } from "node:net";
import { selfSignedCert, type SelfSignedCert } from "../../../test/support/httpTarget.js";
import { startSmtpServer, type SmtpTestServer } from "../../../test/support/smtpServer.js";
import { DeliveryError, type ChannelForSend, type OutboundNotification } from "../contract.js";
import { emailKind } from "../kinds/email.js";
import { alert } from "./fixtures.js";

const USER = "nms-mailer";
const PASSWORD = "s3cret-Pa55word!";

function notification(over: Partial<OutboundNotification> = {}): OutboundNotification {
  return {
    event: "fire",
    alert: alert(),
    subject: "[CRITICAL] core-sw1: CPU load above 90%",
    body: "CPU load above 90%\nNode: core-sw1 (10.0.0.1)\nSeverity: critical (state critical)",
    dedupKey: "node:11111111-2222-3333-4444-555555555555:cpu",
    idempotencyKey: "0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:fire",
    test: false,
    incidentRef: null,
    ...over,
  };
}

/** A channel as the kernel hands it to send(): config validated, defaults filled in. */
function channel(config: Record<string, unknown>): ChannelForSend {
  const copy = structuredClone(config);
  const check = new Ajv({ allErrors: true, useDefaults: true, strict: false }).compile(emailKind.configSchema);
  if (!check(copy)) throw new Error(`test config invalid: ${JSON.stringify(check.errors)}`);
  emailKind.validate?.(copy);
  return { id: "c0ffee00-0000-4000-8000-000000000001", name: "ops mail", config: copy };
}

const signal = () => AbortSignal.timeout(15000);

/** Sends and returns the DeliveryError it must fail with. */
async function failure(config: Record<string, unknown>, n = notification(), s = signal()): Promise<DeliveryError> {
  try {
    await emailKind.send(n, channel(config), s);
  } catch (err) {
    expect(err).toBeInstanceOf(DeliveryError);
    return err as DeliveryError;
  }
  throw new Error("send() did not fail");
}

function expectNoSecrets(err: DeliveryError, ...secrets: string[]) {
  for (const s of [PASSWORD, USER, "127.0.0.1", "localhost", ...secrets]) expect(err.message).not.toContain(s);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

let cert: SelfSignedCert;
let plain: SmtpTestServer;
let starttls: SmtpTestServer;
let implicit: SmtpTestServer;

beforeAll(async () => {
  cert = selfSignedCert();
  [plain, starttls, implicit] = await Promise.all([
    startSmtpServer({ mode: "plain" }),
    startSmtpServer({ mode: "starttls", auth: { username: USER, password: PASSWORD }, cert }),
    startSmtpServer({ mode: "tls", auth: { username: USER, password: PASSWORD }, cert }),
  ]);
});

afterAll(async () => {
  await Promise.all([plain?.close(), starttls?.close(), implicit?.close()]);
});

describe("emailKind.send() delivers", () => {
  it("over plain SMTP: from, to, subject, text body and the idempotency and dedup headers", async () => {
    const before = plain.messages.length;
    const n = notification();
    const out = await emailKind.send(
      n,
      channel({ host: "127.0.0.1", port: plain.port, security: "none", from: "nms@example.test", to: ["ops@example.test", "noc@example.test"] }),
      signal(),
    );
    expect(out).toEqual({ status: null });
    const [m] = (await plain.waitForMessages(before + 1)).slice(before);
    expect(m!.envelope).toEqual({ mailFrom: "nms@example.test", rcptTo: ["ops@example.test", "noc@example.test"] });
    expect(m!.secure).toBe(false);
    expect(m!.user).toBeNull();
    expect(m!.headers.from).toEqual(["nms@example.test"]);
    expect(m!.headers.to).toEqual(["ops@example.test, noc@example.test"]);
    expect(m!.subject).toBe(n.subject);
    expect(m!.text).toBe(n.body);
    expect(m!.headers["message-id"]).toEqual(["<0d9a6c55-8f7e-4b1c-9a0e-3e1f2d4c5b6a:fire@example.test>"]);
    expect(m!.headers["x-nms-idempotency-key"]).toEqual([n.idempotencyKey]);
    expect(m!.headers["x-nms-dedup-key"]).toEqual([n.dedupKey]);
  });

  it("the alert as JSON when the body is null, and a non-ASCII subject intact", async () => {
    const before = plain.messages.length;
    const n = notification({ body: null, subject: "[RESOLVED CRITICAL] Zürich-sw1: Temperatur über 70°C", event: "resolve" });
    await emailKind.send(n, channel({ host: "127.0.0.1", port: plain.port, security: "none", from: "nms@example.test", to: ["ops@example.test"] }), signal());
    const [m] = (await plain.waitForMessages(before + 1)).slice(before);
    expect(m!.subject).toBe(n.subject);
    expect(JSON.parse(m!.text)).toEqual(n.alert);
  });

  it("over STARTTLS with AUTH, trusting the server's certificate through ca_cert", async () => {
    const before = starttls.messages.length;
    const n = notification();
    const out = await emailKind.send(
      n,
      channel({
        host: "127.0.0.1",
        port: starttls.port,
        security: "starttls",
        username: USER,
        password: PASSWORD,
        from: "nms@example.test",
        to: ["ops@example.test"],
        ca_cert: starttls.ca,
      }),
      signal(),
    );
    expect(out).toEqual({ status: null });
    const [m] = (await starttls.waitForMessages(before + 1)).slice(before);
    expect(m!.secure).toBe(true);
    expect(m!.user).toBe(USER);
    expect(m!.envelope).toEqual({ mailFrom: "nms@example.test", rcptTo: ["ops@example.test"] });
    expect(m!.subject).toBe(n.subject);
    expect(m!.text).toBe(n.body);
    expect(m!.headers["x-nms-idempotency-key"]).toEqual([n.idempotencyKey]);
    expect(m!.headers["x-nms-dedup-key"]).toEqual([n.dedupKey]);
  });

  it("over implicit TLS (SMTPS) with AUTH", async () => {
    const before = implicit.messages.length;
    const n = notification({ event: "suppress", subject: "[SUPPRESSED CRITICAL] core-sw1: CPU load above 90%" });
    await emailKind.send(
      n,
      channel({
        host: "127.0.0.1",
        port: implicit.port,
        security: "tls",
        username: USER,
        password: PASSWORD,
        from: "alerts@nms.example.test",
        to: ["ops@example.test"],
        ca_cert: implicit.ca,
      }),
      signal(),
    );
    const [m] = (await implicit.waitForMessages(before + 1)).slice(before);
    expect(m!.secure).toBe(true);
    expect(m!.user).toBe(USER);
    expect(m!.envelope.mailFrom).toBe("alerts@nms.example.test");
    expect(m!.subject).toBe(n.subject);
    expect(m!.text).toBe(n.body);
    expect(m!.headers["message-id"]).toEqual([`<${n.idempotencyKey}@nms.example.test>`]);
    expect(m!.headers["x-nms-dedup-key"]).toEqual([n.dedupKey]);
  });

  it("with reject_unauthorized false, to a server whose certificate it does not trust", async () => {
    const before = implicit.messages.length;
    await emailKind.send(
      notification(),
      channel({
        host: "127.0.0.1",
        port: implicit.port,
        security: "tls",
        username: USER,
        password: PASSWORD,
        from: "nms@example.test",
        to: ["ops@example.test"],
        reject_unauthorized: false,
      }),
      signal(),
    );
    await implicit.waitForMessages(before + 1);
  });
});

describe("emailKind.send() fails with a DeliveryError", () => {
  const authConfig = () => ({
    host: "127.0.0.1",
    port: starttls.port,
    security: "starttls",
    username: USER,
    password: PASSWORD,
    from: "nms@example.test",
    to: ["ops@example.test"],
    ca_cert: starttls.ca,
  });

  it("wrong password: smtp_auth, not retryable, no password, user name or host in the message", async () => {
    const before = starttls.messages.length;
    const err = await failure({ ...authConfig(), password: "wrong-Pa55word" });
    expect(err.errorClass).toBe("smtp_auth");
    expect(err.options.retryable).toBe(false);
    expect(err.message).toMatch(/^SMTP 535 authentication failed/);
    expectNoSecrets(err, "wrong-Pa55word");
    expect(starttls.messages.length).toBe(before);
    expect(starttls.authFailures).toContain(USER);
  });

  it("a server that requires AUTH, without credentials: SMTP 530, not retryable", async () => {
    const { username: _u, password: _p, ...noAuth } = authConfig();
    const err = await failure(noAuth);
    expect(err.errorClass).toBe("smtp_auth");
    expect(err.options.retryable).toBe(false);
    expect(err.message).toBe("SMTP 530 authentication required");
    expectNoSecrets(err);
  });

  it("a temporary auth failure (454): retryable", async () => {
    starttls.rejectAuth(454, "4.7.0 Temporary authentication failure");
    try {
      const err = await failure(authConfig());
      expect(err.errorClass).toBe("smtp_auth");
      expect(err.options.retryable).toBe(true);
      expect(err.message).toMatch(/^SMTP 454 /);
      expectNoSecrets(err);
    } finally {
      starttls.reset();
    }
  });

  it("recipient rejected with 550: smtp_rejected, not retryable, the reply code in the message", async () => {
    plain.rejectRecipient("gone@example.test", 550, "5.1.1 <gone@example.test>: user unknown on smtp.test.invalid 127.0.0.1");
    try {
      const err = await failure({ host: "127.0.0.1", port: plain.port, security: "none", from: "nms@example.test", to: ["gone@example.test"] });
      expect(err.errorClass).toBe("smtp_rejected");
      expect(err.options.retryable).toBe(false);
      expect(err.message).toMatch(/^SMTP 550 recipient rejected/);
      expectNoSecrets(err);
    } finally {
      plain.reset();
    }
  });

  it("recipient deferred with 451: retryable", async () => {
    plain.rejectRecipient("busy@example.test", 451, "4.3.0 try again later");
    try {
      const err = await failure({ host: "127.0.0.1", port: plain.port, security: "none", from: "nms@example.test", to: ["busy@example.test"] });
      expect(err.errorClass).toBe("smtp_deferred");
      expect(err.options.retryable).toBe(true);
      expect(err.message).toMatch(/^SMTP 451 recipient rejected temporarily/);
    } finally {
      plain.reset();
    }
  });

  it("message refused after DATA: 554 not retryable, 452 retryable", async () => {
    const config = { host: "127.0.0.1", port: plain.port, security: "none", from: "nms@example.test", to: ["ops@example.test"] };
    plain.rejectData(554);
    try {
      const err = await failure(config);
      expect(err.errorClass).toBe("smtp_rejected");
      expect(err.options.retryable).toBe(false);
      expect(err.message).toMatch(/^SMTP 554 message rejected/);
      plain.rejectData(452, "4.3.1 Insufficient system storage");
      const temp = await failure(config);
      expect(temp.options.retryable).toBe(true);
      expect(temp.message).toMatch(/^SMTP 452 /);
    } finally {
      plain.reset();
    }
  });

  it("nothing listening: connect, retryable, 'connection refused'", async () => {
    const err = await failure({ host: "127.0.0.1", port: await closedPort(), security: "none", from: "nms@example.test", to: ["ops@example.test"] });
    expect(err.errorClass).toBe("connect");
    expect(err.options.retryable).toBe(true);
    expect(err.message).toBe("connection refused");
  });

  it("implicit TLS to an untrusted certificate with reject_unauthorized true: tls", async () => {
    const err = await failure({ ...authConfig(), port: implicit.port, security: "tls", ca_cert: null });
    expect(err.errorClass).toBe("tls");
    expect(err.message).toMatch(/^TLS handshake failed/);
    expectNoSecrets(err);
    expect(implicit.authFailures).not.toContain(USER);
  });

  it("STARTTLS to an untrusted certificate (a CA that did not sign it): tls", async () => {
    const other = selfSignedCert();
    const err = await failure({ ...authConfig(), ca_cert: other.cert });
    expect(err.errorClass).toBe("tls");
    expect(err.message).toMatch(/^TLS handshake failed/);
    expectNoSecrets(err);
  });

  it("implicit TLS to a plain SMTP port: tls, not retryable", async () => {
    const err = await failure({ host: "127.0.0.1", port: plain.port, security: "tls", from: "nms@example.test", to: ["ops@example.test"] });
    expect(err.errorClass).toBe("tls");
    expect(err.options.retryable).toBe(false);
    expect(err.message).toMatch(/^TLS handshake failed/);
  });

  it("STARTTLS required but the server does not offer it: tls, not retryable", async () => {
    const err = await failure({ host: "127.0.0.1", port: plain.port, security: "starttls", from: "nms@example.test", to: ["ops@example.test"] });
    expect(err.errorClass).toBe("tls");
    expect(err.options.retryable).toBe(false);
  });

  describe("a server that accepts the connection and never greets", () => {
    let silent: Server;
    let port: number;
    beforeAll(async () => {
      silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      port = (silent.address() as AddressInfo).port;
    });
    afterAll(async () => {
      silent.close();
      await new Promise<void>((resolve) => setImmediate(resolve));
    });

    it("times out after timeout_ms: timeout, retryable", async () => {
      const started = Date.now();
      const err = await failure({ host: "127.0.0.1", port, security: "none", from: "nms@example.test", to: ["ops@example.test"], timeout_ms: 1000 });
      expect(err.errorClass).toBe("timeout");
      expect(err.options.retryable).toBe(true);
      expect(err.message).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it("the signal's timeout ends it first: timeout", async () => {
      const started = Date.now();
      const err = await failure(
        { host: "127.0.0.1", port, security: "none", from: "nms@example.test", to: ["ops@example.test"] },
        notification(),
        AbortSignal.timeout(300),
      );
      expect(err.errorClass).toBe("timeout");
      expect(err.options.retryable).toBe(true);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it("an abort (shutdown): aborted, retryable", async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 200);
      const err = await failure({ host: "127.0.0.1", port, security: "none", from: "nms@example.test", to: ["ops@example.test"] }, notification(), ac.signal);
      expect(err.errorClass).toBe("aborted");
      expect(err.message).toBe("aborted");
    });
  });
});

describe("the email config", () => {
  const check = (config: Record<string, unknown>): string | null => {
    const validate = new Ajv({ allErrors: true, useDefaults: true, strict: false }).compile(emailKind.configSchema);
    const copy = structuredClone(config);
    if (!validate(copy)) return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join("; ");
    try {
      emailKind.validate?.(copy);
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  };
  const ok = { host: "smtp.example.test", from: "nms@example.test", to: ["ops@example.test"] };

  it("fills in the defaults", () => {
    expect(channel(ok).config).toEqual({ ...ok, port: 587, security: "starttls", reject_unauthorized: true, timeout_ms: 10000 });
  });

  it("takes a full config, IPv4 and IPv6 hosts", () => {
    expect(
      check({ ...ok, port: 465, security: "tls", username: "u", password: "p", ca_cert: cert.cert, reject_unauthorized: false, timeout_ms: 60000 }),
    ).toBeNull();
    expect(check({ ...ok, host: "192.0.2.25" })).toBeNull();
    expect(check({ ...ok, host: "2001:db8::25" })).toBeNull();
    expect(check({ ...ok, username: null, password: null, ca_cert: null })).toBeNull();
  });

  it.each([
    ["no host", { from: ok.from, to: ok.to }],
    ["no from", { host: ok.host, to: ok.to }],
    ["no to", { host: ok.host, from: ok.from }],
    ["an unknown field", { ...ok, tls: true }],
    ["a host with a space", { ...ok, host: "smtp example.test" }],
    ["a host with a scheme", { ...ok, host: "smtp://smtp.example.test" }],
    ["a host that is not IPv6", { ...ok, host: "2001:db8::zz" }],
    ["port 0", { ...ok, port: 0 }],
    ["port 65536", { ...ok, port: 65536 }],
    ["a fractional port", { ...ok, port: 25.5 }],
    ["an unknown security", { ...ok, security: "ssl" }],
    ["from without @", { ...ok, from: "nms" }],
    ["from with a display name", { ...ok, from: "NMS <nms@example.test>" }],
    ["from with a line break", { ...ok, from: "nms@example.test\r\nBcc: x@example.test" }],
    ["an empty to", { ...ok, to: [] }],
    ["a bad address in to", { ...ok, to: ["ops@example.test", "not-an-address"] }],
    ["51 recipients", { ...ok, to: Array.from({ length: 51 }, (_, i) => `ops${i}@example.test`) }],
    ["to as a string", { ...ok, to: "ops@example.test" }],
    ["a password without a username", { ...ok, password: "p" }],
    ["a password with a null username", { ...ok, username: null, password: "p" }],
    ["a ca_cert that is not PEM", { ...ok, ca_cert: "not a certificate" }],
    [
      "a private key as ca_cert",
      { ...ok, ca_cert: "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n" },
    ],
    ["reject_unauthorized as a string", { ...ok, reject_unauthorized: "no" }],
    ["timeout_ms below 1000", { ...ok, timeout_ms: 999 }],
    ["timeout_ms above 60000", { ...ok, timeout_ms: 60001 }],
  ])("refuses %s", (_what, config) => {
    expect(check(config as Record<string, unknown>)).not.toBeNull();
  });

  it("never puts the password in a validation message", () => {
    const message = check({ ...ok, password: "hunter2-secret" });
    expect(message).toBe("config.password needs config.username.");
  });

  it("declares password as its secret, opens no incidents, and has the named text templates", () => {
    expect(emailKind.kind).toBe("email");
    expect(emailKind.secretFields).toEqual(["password"]);
    expect(emailKind.opensIncidents).toBe(false);
    for (const point of ["fire", "resolve", "suppress"] as const) {
      expect(emailKind.builtinTemplates[point].subject).toContain("alert.severity");
      expect(typeof emailKind.builtinTemplates[point].body).toBe("string");
    }
  });
});
