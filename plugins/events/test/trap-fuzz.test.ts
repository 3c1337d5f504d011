/**
 * The trap listener under malformed input: random bytes, every truncation of real trap datagrams
 * (captured from snmptrap), mutated bytes, and crafted messages that are valid BER but not valid
 * notifications. The listener must survive, count every datagram exactly once, deliver malformed
 * ones as raw hex (without the community), and still decode a real trap afterwards.
 */
import type { Inbound } from "../lib/types.js";
import { startTrapListener, type TrapListener } from "../traps/receiver.js";
import { ber, captureDatagram, LOOPBACK, removeSenderState, sendDatagrams, snmptrap } from "../../../test/support/trapSenders.js";

const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
const TRAP_OID = "1.3.6.1.6.3.1.1.4.1.0";
const UPTIME = "1.3.6.1.2.1.1.3.0";
const PUBLIC_HEX = Buffer.from("public").toString("hex");
const V3 = ["-v3", "-u", "trapuser", "-l", "authPriv", "-a", "SHA", "-A", "trapauthpass", "-x", "AES", "-X", "trapprivpass", "-e", "0x8000000001020304"];

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(rand: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

const truncations = (b: Buffer) => Array.from({ length: b.length }, (_, n) => b.subarray(0, n));

let listener: TrapListener;
const got: Inbound[] = [];
let v2c: Buffer;
let v1: Buffer;
let v3: Buffer;

beforeAll(async () => {
  v2c = await captureDatagram((port) => snmptrap(["-v2c", "-c", "public", `${LOOPBACK}:${port}`, "4242", LINK_DOWN, "1.3.6.1.2.1.2.2.1.1.2", "i", "2"]));
  v1 = await captureDatagram((port) =>
    snmptrap(["-v1", "-c", "public", `${LOOPBACK}:${port}`, "1.3.6.1.4.1.8072.2.3", LOOPBACK, "6", "5", "99", "1.3.6.1.4.1.8072.2.3.2.1", "s", "x"]),
  );
  v3 = await captureDatagram((port) => snmptrap([...V3, `${LOOPBACK}:${port}`, "", LINK_DOWN]));
  listener = await startTrapListener({
    host: LOOPBACK,
    port: 0,
    communities: ["public"],
    users: [{ name: "trapuser", level: "authPriv", authProtocol: "sha", authKey: "trapauthpass", privProtocol: "aes", privKey: "trapprivpass" }],
    engineIdCacheSize: 16,
    onMessage: (m) => got.push(m),
  });
});

afterAll(async () => {
  await listener?.close();
  removeSenderState();
});

/** Sends `datagrams` and waits until the listener has read them all; returns what it delivered for them. */
async function feed(datagrams: Buffer[]): Promise<{ delivered: Inbound[]; counters: { received: number; dropped: number; malformed: number } }> {
  const start = { ...listener.counters };
  const from = got.length;
  await sendDatagrams(listener.port, datagrams);
  const target = start.received + datagrams.length;
  const deadline = Date.now() + 20000;
  while (listener.counters.received < target) {
    if (Date.now() > deadline) throw new Error(`listener read ${listener.counters.received - start.received} of ${datagrams.length} datagrams`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    delivered: got.slice(from),
    counters: {
      received: listener.counters.received - start.received,
      dropped: listener.counters.dropped - start.dropped,
      malformed: listener.counters.malformed - start.malformed,
    },
  };
}

/** Every string in a delivered record is free of NULs and lone surrogates. */
function assertCleanText(m: Inbound): void {
  const text = JSON.stringify(m);
  expect(text).not.toMatch(/\\u0000/);
  expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)).toBe(false);
}

describe("trap listener fuzzing", () => {
  test("the captured datagrams are real, decodable traps", async () => {
    const { delivered, counters } = await feed([v2c, v1, v3]);
    expect(counters).toEqual({ received: 3, dropped: 0, malformed: 0 });
    expect(delivered.map((m) => m.trap?.version)).toEqual(["v2c", "v1", "v3"]);
    expect(delivered[1].trap?.trap_oid).toBe("1.3.6.1.4.1.8072.2.3.0.5");
  });

  test("random bytes are malformed, delivered as raw hex of at most 512 bytes", async () => {
    const rand = prng(0x5eed);
    const corpus = Array.from({ length: 200 }, (_, i) => randomBytes(rand, i % 2 ? Math.floor(rand() * 700) : 1 + Math.floor(rand() * 64)));
    // Random contents behind a plausible SEQUENCE header, to get past the first byte.
    for (let i = 0; i < 50; i++) {
      const body = randomBytes(rand, 10 + Math.floor(rand() * 100));
      corpus.push(Buffer.concat([Buffer.from([0x30, body.length]), body]));
    }
    const { delivered, counters } = await feed(corpus);
    expect(counters).toEqual({ received: corpus.length, dropped: 0, malformed: corpus.length });
    expect(delivered).toHaveLength(corpus.length);
    delivered.forEach((m, i) => {
      expect(m).toMatchObject({ kind: "trap", listener: "traps.udp", malformed: true, trap: null, source_ip: LOOPBACK });
      expect(m.raw).toBe("0x" + corpus[i].subarray(0, 512).toString("hex"));
    });
  });

  test("every truncation of real v1, v2c and v3 trap datagrams is malformed, and the community never shows in raw", async () => {
    const corpus = [...truncations(v2c), ...truncations(v1), ...truncations(v3)];
    const { delivered, counters } = await feed(corpus);
    expect(counters).toEqual({ received: corpus.length, dropped: 0, malformed: corpus.length });
    expect(delivered.every((m) => m.malformed && m.trap === null)).toBe(true);
    for (const m of delivered) expect(m.raw).not.toContain(PUBLIC_HEX);
    // The community's bytes are overwritten, not cut: the rest of the dump is the datagram.
    const full = delivered[v2c.length - 1].raw!;
    expect(full.length).toBe(2 + 2 * (v2c.length - 1));
    expect(full).toContain("2a2a2a2a2a2a");
  });

  test("mutated bytes: every datagram is counted exactly once and what is delivered is clean", async () => {
    const corpus: Buffer[] = [];
    for (const base of [v2c, v1]) {
      for (let i = 0; i < base.length; i++) {
        for (const x of [0xff, 0x01, 0x80]) {
          const b = Buffer.from(base);
          b[i] ^= x;
          corpus.push(b);
        }
      }
    }
    for (let i = 0; i < v3.length; i++) {
      const b = Buffer.from(v3);
      b[i] ^= 0xff;
      corpus.push(b);
    }
    const { delivered, counters } = await feed(corpus);
    const good = delivered.filter((m) => !m.malformed);
    const bad = delivered.filter((m) => m.malformed);
    expect(counters.received).toBe(corpus.length);
    expect(counters.malformed).toBe(bad.length);
    expect(good.length + counters.dropped + counters.malformed).toBe(corpus.length);
    expect(counters.malformed).toBeGreaterThan(0);
    expect(counters.dropped).toBeGreaterThan(0); // mutated communities and v3 digests
    for (const m of delivered) assertCleanText(m);
    for (const m of good) {
      expect(typeof m.trap!.trap_oid).toBe("string");
      expect(m.trap!.varbinds.every((v) => typeof v.oid === "string" && typeof v.type === "string")).toBe(true);
    }
    for (const m of bad) expect(m.raw).toMatch(/^0x[0-9a-f]*$/);
  });

  test("valid BER that is not a valid notification is malformed", async () => {
    const trapOid = ber.oid(LINK_DOWN);
    const uptime = ber.int(5, 0x43);
    const corpus = [
      ber.community(0, "public", 0xa7, [[TRAP_OID, trapOid]]), // v1 message carrying an SNMPv2 trap PDU
      ber.community(1, "public", 0xa4, []), // v2c message carrying a v1 Trap-PDU tag (with a v2 body)
      ber.community(2, "public", 0xa7, [[TRAP_OID, trapOid]]), // version 2 does not exist
      ber.community(1, "public", 0xa7, [[UPTIME, uptime]]), // no snmpTrapOID.0
      ber.community(1, "public", 0xa7, [[TRAP_OID, ber.int(3)]]), // snmpTrapOID.0 not an OID
      ber.community(1, "public", 0xa0, [["1.3.6.1.2.1.1.3.0", ber.tlv(0x05, Buffer.alloc(0))]]), // GetRequest
      ber.community(1, "public", 0xa2, [[TRAP_OID, trapOid]]), // GetResponse
      Buffer.concat([v2c, Buffer.from([0, 0])]), // trailing bytes
      Buffer.from([0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00]), // indefinite length
      Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x02, 0x01, 0x01]), // absurd length
      Array.from({ length: 40 }).reduce<Buffer>((inner) => ber.seq(inner), ber.int(1)), // nesting bomb
      ber.seq(ber.int(1), ber.str("public"), ber.tlv(0xa7, Buffer.concat([ber.int(1), ber.int(0), ber.int(0), ber.seq(ber.seq(ber.oid(TRAP_OID)))]))),
      ber.community(1, "public", 0xa7, [
        [TRAP_OID, trapOid],
        ["1.3.6.1.2.1.1.5.0", ber.tlv(0x40, Buffer.from([1, 2, 3]))], // IpAddress of 3 bytes
      ]),
    ];
    const { delivered, counters } = await feed(corpus);
    expect(counters).toEqual({ received: corpus.length, dropped: 0, malformed: corpus.length });
    expect(delivered.map((m) => m.malformed)).toEqual(corpus.map(() => true));
    for (const m of delivered) expect(m.raw).not.toContain(PUBLIC_HEX);
  });

  test("crafted valid notifications still decode (the encoder and the checks agree)", async () => {
    const corpus = [
      ber.community(1, "public", 0xa7, [
        [UPTIME, ber.int(5, 0x43)],
        [TRAP_OID, ber.oid(LINK_DOWN)],
        ["1.3.6.1.4.1.8072.9.1", ber.str(Buffer.from([0xed, 0xa0, 0x80]))], // CESU surrogate: not UTF-8
        ["1.3.6.1.4.1.8072.9.2", ber.str("tab\tand\nnewline")],
        ["1.3.6.1.4.1.8072.9.3", ber.str(Buffer.from([0xc2, 0x85]))], // U+0085, a C1 control
        ["1.3.6.1.4.1.8072.9.4", ber.tlv(0x46, Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))],
        ["1.3.6.1.4.1.8072.9.5", ber.tlv(0x44, Buffer.from([0x9f, 0x78, 0x04, 0x3f, 0x80, 0, 0]))],
        ["1.3.6.1.4.1.8072.9.6", ber.tlv(0x80, Buffer.alloc(0))],
        ["1.3.6.1.4.1.8072.9.7", ber.tlv(0x05, Buffer.alloc(0))],
      ]),
    ];
    const { delivered, counters } = await feed(corpus);
    expect(counters).toEqual({ received: 1, dropped: 0, malformed: 0 });
    expect(delivered[0].trap!.uptime).toBe(5);
    expect(delivered[0].trap!.varbinds.map((v) => [v.type, v.value])).toEqual([
      ["OctetString", "0xeda080"],
      ["OctetString", "tab\tand\nnewline"],
      ["OctetString", "0xc285"],
      ["Counter64", "18446744073709551615"],
      ["Opaque", "0x9f78043f800000"],
      ["NoSuchObject", null],
      ["Null", null],
    ]);
  });

  test("after all that, the listener still decodes a real trap and the totals add up", async () => {
    const before = { ...listener.counters };
    await snmptrap(["-v2c", "-c", "public", `${LOOPBACK}:${listener.port}`, "", LINK_DOWN]);
    const deadline = Date.now() + 10000;
    while (listener.counters.received === before.received && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(got[got.length - 1].trap?.trap_oid).toBe(LINK_DOWN);
    expect(listener.counters).toEqual({ ...before, received: before.received + 1 });
    const deliveredOk = got.filter((m) => !m.malformed).length;
    expect(deliveredOk + listener.counters.dropped + listener.counters.malformed).toBe(listener.counters.received);
  });
});
