/**
 * The syslog listeners against real senders on loopback: util-linux logger (UDP, TCP with LF and
 * octet-counting framing, RFC 5424 and 3164) and rsyslogd relaying over UDP, TCP and TLS; plus hostile
 * connections (junk, oversized, half frames), connection limits, idle timeout and bind errors.
 */
import { createPrivateKey, randomUUID, X509Certificate } from "node:crypto";
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import type { BoundListener, Inbound } from "../lib/types.js";
import { ensureSelfSignedPair, type SelfSignedPair } from "../syslog/selfsigned.js";
import { normaliseAddress, startSyslogListeners } from "../syslog/server.js";
import { LOOPBACK, sendWithLogger, startRsyslogRelay, stopAllSyslogPeers } from "../../../test/support/syslogPeers.js";

const received: Inbound[] = [];
let listeners: BoundListener[] = [];
let tlsDir: string;
let pair: SelfSignedPair;

function port(protocol: "udp" | "tcp" | "tls", set = listeners): number {
  const l = set.find((x) => x.protocol === protocol);
  if (!l) throw new Error(`no ${protocol} listener`);
  return l.port;
}

function counters(protocol: "udp" | "tcp" | "tls", set = listeners) {
  return set.find((x) => x.protocol === protocol)!.counters;
}

/** Waits for a message whose text holds `marker` (parsed message, or raw text). */
async function waitFor(marker: string, inbox = received, timeoutMs = 15_000): Promise<Inbound> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const hit = inbox.find((m) => (m.syslog?.message ?? m.raw ?? "").includes(marker));
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`no message with ${marker} within ${timeoutMs} ms; got ${inbox.length}: ${JSON.stringify(inbox.slice(-5))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function openTcp(p: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(p, LOOPBACK, () => resolve(s));
    s.once("error", reject);
  });
}

function closed(s: Socket): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.once("close", () => resolve())));
}

const mark = () => `m-${randomUUID()}`;

beforeAll(async () => {
  tlsDir = mkdtempSync(join(tmpdir(), "nms-syslog-tls-"));
  pair = await ensureSelfSignedPair(tlsDir);
  listeners = await startSyslogListeners({ host: LOOPBACK, udp: 0, tcp: 0, tls: 0, tlsCert: pair.cert, tlsKey: pair.key, onMessage: (m) => received.push(m) });
});

afterAll(async () => {
  await stopAllSyslogPeers();
  await Promise.all(listeners.map((l) => l.close()));
  rmSync(tlsDir, { recursive: true, force: true });
});

describe("bound listeners", () => {
  it("report name, stream, protocol, real port and counters", () => {
    expect(listeners.map((l) => [l.name, l.stream, l.protocol, l.address])).toEqual([
      ["syslog.udp", "syslog", "udp", LOOPBACK],
      ["syslog.tcp", "syslog", "tcp", LOOPBACK],
      ["syslog.tls", "syslog", "tls", LOOPBACK],
    ]);
    for (const l of listeners) {
      expect(l.port).toBeGreaterThan(0);
      expect(l.counters).toEqual(expect.objectContaining({ received: expect.any(Number), dropped: 0, malformed: expect.any(Number) }));
    }
  });
});

describe("logger", () => {
  it("UDP RFC 5424 with msgid and structured data", async () => {
    const m = mark();
    await sendWithLogger({
      port: port("udp"),
      transport: "udp",
      format: "rfc5424",
      tag: "nmsapp",
      pid: 4242,
      msgid: "ID77",
      priority: "local3.warning",
      sd: [["meta@32473", ['k="v 1"', 'q="a\\"b"']]],
      message: `hello ${m}`,
    });
    const got = await waitFor(m);
    expect(got).toMatchObject({ kind: "syslog", transport: "udp", listener: "syslog.udp", source_ip: "127.0.0.1", malformed: false, raw: null, trap: null });
    const s = got.syslog!;
    expect(s).toMatchObject({ format: "rfc5424", facility: 19, severity: 4, app_name: "nmsapp", procid: "4242", msgid: "ID77", message: `hello ${m}` });
    expect(s.hostname).toBeTruthy();
    expect(Math.abs(Date.parse(s.timestamp!) - Date.now())).toBeLessThan(60_000);
    expect(s.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const meta = s.structured_data.find((e) => e.id === "meta@32473");
    expect(meta?.params).toEqual([
      ["k", "v 1"],
      ["q", 'a"b'],
    ]);
    expect(s.structured_data.some((e) => e.id === "timeQuality")).toBe(true);
  });

  it("UDP RFC 3164", async () => {
    const m = mark();
    await sendWithLogger({ port: port("udp"), transport: "udp", format: "rfc3164", tag: "bsdapp", pid: 99, priority: "daemon.err", message: `bsd ${m}` });
    const s = (await waitFor(m)).syslog!;
    expect(s).toMatchObject({ format: "rfc3164", facility: 3, severity: 3, app_name: "bsdapp", procid: "99", message: `bsd ${m}` });
    expect(s.hostname).toBeTruthy();
    expect(Math.abs(Date.parse(s.timestamp!) - Date.now())).toBeLessThan(60_000);
  });

  it("TCP RFC 5424 with LF framing and with octet counting, and TCP RFC 3164", async () => {
    const a = mark();
    const b = mark();
    const c = mark();
    await sendWithLogger({ port: port("tcp"), transport: "tcp", format: "rfc5424", tag: "tcpapp", message: `lf ${a}` });
    await sendWithLogger({ port: port("tcp"), transport: "tcp", format: "rfc5424", octetCount: true, tag: "tcpapp", message: `oc ${b}` });
    await sendWithLogger({ port: port("tcp"), transport: "tcp", format: "rfc3164", tag: "tcpbsd", message: `bsd ${c}` });
    expect((await waitFor(a)).syslog).toMatchObject({ format: "rfc5424", app_name: "tcpapp", message: `lf ${a}` });
    const gb = await waitFor(b);
    expect(gb).toMatchObject({ transport: "tcp", listener: "syslog.tcp", source_ip: "127.0.0.1" });
    expect(gb.syslog).toMatchObject({ format: "rfc5424", app_name: "tcpapp", message: `oc ${b}` });
    expect((await waitFor(c)).syslog).toMatchObject({ format: "rfc3164", app_name: "tcpbsd", message: `bsd ${c}` });
  });

  it("a UTF-8 message arrives intact", async () => {
    const m = mark();
    await sendWithLogger({ port: port("udp"), transport: "udp", format: "rfc5424", message: `grüße ✓ 🎉 ${m}` });
    expect((await waitFor(m)).syslog?.message).toBe(`grüße ✓ 🎉 ${m}`);
  });
});

describe("rsyslogd relay", () => {
  it("forwards over UDP in RFC 5424 (RSYSLOG_SyslogProtocol23Format)", async () => {
    const relay = await startRsyslogRelay({ forwardPort: port("udp"), protocol: "udp" });
    try {
      const m = mark();
      await sendWithLogger({
        port: relay.inputPort,
        transport: "udp",
        format: "rfc3164",
        tag: "relayudp",
        pid: 7,
        priority: "local0.info",
        message: `via udp ${m}`,
      });
      const got = await waitFor(m).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${relay.output()}`)));
      expect(got.transport).toBe("udp");
      expect(got.syslog).toMatchObject({ format: "rfc5424", facility: 16, severity: 6, app_name: "relayudp", procid: "7" });
      expect(got.syslog?.message.trim()).toBe(`via udp ${m}`);
    } finally {
      await relay.stop();
    }
  });

  it("forwards over TCP with LF framing in the BSD forward format (RFC 3339 time)", async () => {
    const relay = await startRsyslogRelay({ forwardPort: port("tcp"), protocol: "tcp", template: "RSYSLOG_ForwardFormat" });
    try {
      const m = mark();
      await sendWithLogger({ port: relay.inputPort, transport: "udp", format: "rfc3164", tag: "relaytcp", pid: 8, message: `via tcp ${m}` });
      const got = await waitFor(m).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${relay.output()}`)));
      expect(got.transport).toBe("tcp");
      expect(got.syslog).toMatchObject({ format: "rfc3164", app_name: "relaytcp", procid: "8", message: `via tcp ${m}` });
      expect(got.syslog?.hostname).toBeTruthy();
      expect(Math.abs(Date.parse(got.syslog!.timestamp!) - Date.now())).toBeLessThan(60_000);
    } finally {
      await relay.stop();
    }
  });

  it("forwards over TCP with octet counting in RFC 5424", async () => {
    const relay = await startRsyslogRelay({ forwardPort: port("tcp"), protocol: "tcp", framing: "octet-counted" });
    try {
      const ms = [mark(), mark(), mark()];
      for (const m of ms)
        await sendWithLogger({ port: relay.inputPort, transport: "udp", format: "rfc5424", tag: "relayoc", msgid: "OC1", message: `oc ${m}` });
      for (const m of ms) {
        const got = await waitFor(m).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${relay.output()}`)));
        expect(got.syslog).toMatchObject({ format: "rfc5424", app_name: "relayoc", msgid: "OC1" });
        expect(got.syslog?.message.trim()).toBe(`oc ${m}`);
      }
    } finally {
      await relay.stop();
    }
  });

  it("forwards over TLS (gtls, anonymous auth) in RFC 5424", async () => {
    const relay = await startRsyslogRelay({ forwardPort: port("tls"), protocol: "tls", framing: "octet-counted" });
    try {
      const m = mark();
      await sendWithLogger({ port: relay.inputPort, transport: "udp", format: "rfc5424", tag: "relaytls", message: `via tls ${m}` });
      const got = await waitFor(m, received, 30_000).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${relay.output()}`)));
      expect(got).toMatchObject({ transport: "tls", listener: "syslog.tls", source_ip: "127.0.0.1", malformed: false });
      expect(got.syslog).toMatchObject({ format: "rfc5424", app_name: "relaytls" });
      expect(counters("tls").received).toBeGreaterThan(0);
    } finally {
      await relay.stop();
    }
  });
});

describe("hostile input", () => {
  it("counts junk on a TCP connection (binary, invalid PRI, oversized, half a frame) and keeps working", async () => {
    const before = { ...counters("tcp") };
    const m = mark();
    const s = await openTcp(port("tcp"));
    s.write(Buffer.from([0x01, 0x02, 0x03, 0xff, 0xfe, 0x10, 0x0a]));
    s.write(`<999>bad pri ${m}-pri\n`);
    s.write(`<13>${"z".repeat(10_000)}\n`);
    s.write(`<13>Nov 24 10:00:00 host app: fine ${m}\n`);
    s.write(`100 <13>half ${m}-half`);
    s.end();
    await closed(s);
    const good = await waitFor(`fine ${m}`);
    expect(good.syslog).toMatchObject({ format: "rfc3164", app_name: "app", hostname: "host" });
    const pri = await waitFor(`${m}-pri`);
    expect(pri).toMatchObject({ malformed: true, syslog: null, raw: `<999>bad pri ${m}-pri` });
    const half = await waitFor(`${m}-half`);
    expect(half).toMatchObject({ malformed: true, syslog: null, raw: `<13>half ${m}-half` });
    await until(() => counters("tcp").malformed - before.malformed >= 3, "three malformed");
    const c = counters("tcp");
    expect(c.malformed - before.malformed).toBe(3); // binary, invalid PRI, half frame
    expect(c.dropped - before.dropped).toBe(1); // oversized
    expect(c.received - before.received).toBe(5);
    expect(received.some((x) => (x.raw ?? "").includes("\0"))).toBe(false);

    // A broken octet count closes the connection; the listener goes on.
    const bad = await openTcp(port("tcp"));
    bad.write("12x34 <13>broken\n");
    await closed(bad);
    const after = mark();
    await sendWithLogger({ port: port("tcp"), transport: "tcp", format: "rfc5424", message: `still up ${after}` });
    await waitFor(after);
  });

  it("counts junk datagrams and strips an octet count inside a datagram", async () => {
    const before = { ...counters("udp") };
    const m = mark();
    const s = createSocket("udp4");
    const send = (b: Buffer | string) => new Promise<void>((resolve, reject) => s.send(b, port("udp"), LOOPBACK, (err) => (err ? reject(err) : resolve())));
    await send(Buffer.from([0, 1, 2, 3, 0xff]));
    await send("<abc>x");
    await send(`<13>${"o".repeat(9000)}`);
    const body = `<14>Nov 24 10:00:00 h app: counted ${m}`;
    await send(`${Buffer.byteLength(body)} ${body}`);
    s.close();
    const got = await waitFor(`counted ${m}`);
    expect(got.syslog).toMatchObject({ format: "rfc3164", app_name: "app", severity: 6 });
    await until(() => counters("udp").received - before.received >= 4, "four datagrams");
    expect(counters("udp").malformed - before.malformed).toBe(2);
    expect(counters("udp").dropped - before.dropped).toBe(1);
  });

  it("TLS: a plain-text client fails the handshake without harming the listener", async () => {
    const s = await openTcp(port("tls"));
    s.write("<13>not tls\n");
    await closed(s);
    const c = tlsConnect({ host: LOOPBACK, port: port("tls"), ca: pair.cert, servername: "localhost" });
    await new Promise<void>((resolve, reject) => {
      c.once("secureConnect", () => resolve());
      c.once("error", reject);
    });
    const m = mark();
    c.end(`<13>1 2026-11-24T10:00:00Z h tlsclient - - - direct ${m}\n`);
    expect((await waitFor(m)).syslog).toMatchObject({ format: "rfc5424", app_name: "tlsclient", timestamp: "2026-11-24T10:00:00.000Z" });
  });
});

describe("limits", () => {
  let limited: BoundListener[] = [];
  const inbox: Inbound[] = [];

  beforeAll(async () => {
    limited = await startSyslogListeners({
      host: LOOPBACK,
      udp: null,
      tcp: 0,
      tls: null,
      maxConnectionsPerAddress: 2,
      maxConnections: 3,
      idleTimeoutMs: 400,
      maxMessageBytes: 256,
      onMessage: (m) => inbox.push(m),
    });
  });

  afterAll(async () => {
    await Promise.all(limited.map((l) => l.close()));
  });

  it("closes a connection over the per-address limit at once and counts it as dropped", async () => {
    const p = port("tcp", limited);
    const a = await openTcp(p);
    const b = await openTcp(p);
    a.write("<13>keep a\n");
    b.write("<13>keep b\n");
    await waitFor("keep b", inbox);
    await waitFor("keep a", inbox);
    const c = await openTcp(p);
    c.on("error", () => undefined);
    await closed(c);
    expect(counters("tcp", limited).dropped).toBe(1);
    expect(a.destroyed || b.destroyed).toBe(false);
    a.destroy();
    await closed(a);
    await new Promise((r) => setTimeout(r, 50));
    const d = await openTcp(p);
    const m = mark();
    d.write(`<13>${m}\n`);
    await waitFor(m, inbox);
    b.destroy();
    d.destroy();
    await Promise.all([closed(b), closed(d)]);
    // Let the server see both closes before the next test connects from the same address.
    await new Promise((r) => setTimeout(r, 200));
  });

  it("closes an idle connection after the idle timeout", async () => {
    const dropped = counters("tcp", limited).dropped;
    const s = await openTcp(port("tcp", limited));
    const started = Date.now();
    await closed(s);
    const took = Date.now() - started;
    expect(counters("tcp", limited).dropped).toBe(dropped);
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(5000);
  });

  it("skips an oversized octet-counted frame and a line over the configured max", async () => {
    const before = counters("tcp", limited).dropped;
    const s = await openTcp(port("tcp", limited));
    const m = mark();
    s.write(`300 <13>${"x".repeat(296)}`);
    s.write(`<13>${"y".repeat(300)}\n`);
    s.end(`<13>after ${m}\n`);
    await waitFor(m, inbox);
    expect(counters("tcp", limited).dropped - before).toBe(2);
  });

  it("close() ends open connections", async () => {
    const extra = await startSyslogListeners({ udp: null, tcp: 0, tls: null, onMessage: () => undefined });
    const s = await openTcp(extra[0].port);
    const done = closed(s);
    await extra[0].close();
    await done;
  });
});

describe("more limits and addresses", () => {
  it("closes connections over the total limit, whatever their address", async () => {
    const ls = await startSyslogListeners({ udp: null, tcp: 0, tls: null, maxConnections: 2, maxConnectionsPerAddress: 10, onMessage: () => undefined });
    try {
      const a = await openTcp(ls[0].port);
      const b = await openTcp(ls[0].port);
      a.write("<13>a\n");
      b.write("<13>b\n");
      await until(() => ls[0].counters.received === 2, "two messages");
      const c = await openTcp(ls[0].port);
      c.on("error", () => undefined);
      await closed(c);
      expect(ls[0].counters.dropped).toBe(1);
      expect(a.destroyed || b.destroyed).toBe(false);
      a.destroy();
      b.destroy();
    } finally {
      await ls[0].close();
    }
  });

  it("reports senders reaching a v4-mapped IPv6 socket as IPv4", async () => {
    const inbox: Inbound[] = [];
    const ls = await startSyslogListeners({ host: "::ffff:127.0.0.1", udp: 0, tcp: 0, tls: null, onMessage: (m) => inbox.push(m) });
    try {
      const u = mark();
      const t = mark();
      await sendWithLogger({ port: port("udp", ls), transport: "udp", format: "rfc5424", message: u });
      await sendWithLogger({ port: port("tcp", ls), transport: "tcp", format: "rfc5424", message: t });
      expect((await waitFor(u, inbox)).source_ip).toBe("127.0.0.1");
      expect((await waitFor(t, inbox)).source_ip).toBe("127.0.0.1");
    } finally {
      await Promise.all(ls.map((l) => l.close()));
    }
  });
});

describe("start errors", () => {
  it("rejects naming the port when it is in use, and closes what it had bound", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, LOOPBACK, () => r()));
    const busy = (blocker.address() as { port: number }).port;
    const udpProbe = createSocket("udp4");
    await new Promise<void>((r) => udpProbe.bind(0, LOOPBACK, () => r()));
    const udpPort = udpProbe.address().port;
    await new Promise<void>((r) => udpProbe.close(() => r()));
    try {
      await expect(startSyslogListeners({ udp: udpPort, tcp: busy, tls: null, onMessage: () => undefined })).rejects.toThrow(
        new RegExp(`syslog tcp listener cannot bind 127\\.0\\.0\\.1:${busy}: the port is in use`),
      );
      // The UDP listener bound first was closed again: the port is free.
      const again = createSocket("udp4");
      await new Promise<void>((resolve, reject) => {
        again.once("error", reject);
        again.bind(udpPort, LOOPBACK, () => resolve());
      });
      await new Promise<void>((r) => again.close(() => r()));
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it("rejects a TLS listener without certificate", async () => {
    await expect(startSyslogListeners({ udp: null, tcp: null, tls: 0, onMessage: () => undefined })).rejects.toThrow(/tlsCert and tlsKey/);
  });
});

describe("helpers", () => {
  it("reports v4-mapped IPv6 sources as IPv4", () => {
    expect(normaliseAddress("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(normaliseAddress("::1")).toBe("::1");
    expect(normaliseAddress("2001:db8::1")).toBe("2001:db8::1");
    expect(normaliseAddress("192.0.2.1")).toBe("192.0.2.1");
  });

  it("makes the self-signed pair once (CN, 10 years, key 0600) and reuses it", async () => {
    const again = await ensureSelfSignedPair(tlsDir);
    expect(again.cert).toBe(pair.cert);
    expect(again.key).toBe(pair.key);
    expect(statSync(pair.keyPath).mode & 0o777).toBe(0o600);
    const x = new X509Certificate(pair.cert);
    expect(x.subject).toContain("CN=nms-core syslog");
    const years = (Date.parse(x.validTo) - Date.parse(x.validFrom)) / (365.25 * 86_400_000);
    expect(years).toBeGreaterThan(9.9);
    expect(x.checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
  });

  it("replaces a pair whose files do not belong together", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nms-syslog-tls2-"));
    try {
      const other = await ensureSelfSignedPair(dir);
      writeFileSync(other.keyPath, pair.key, { mode: 0o600 });
      const fixed = await ensureSelfSignedPair(dir);
      expect(fixed.cert).not.toBe(other.cert);
      expect(new X509Certificate(fixed.cert).checkPrivateKey(createPrivateKey(fixed.key))).toBe(true);
      expect(readFileSync(fixed.certPath, "utf8")).toBe(fixed.cert);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
