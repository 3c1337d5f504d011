/**
 * The syslog listeners of a real kernel under junk (issue 10: "Junk (binary, truncated, oversized, an invalid PRI) is
 * counted, stored as raw where it can be, and never stops the listener"): a seeded corpus (FUZZ_SEED replays one) of
 * binary junk with and without NULs, invalid UTF-8, every truncation of an RFC 5424 line, invalid PRIs, lone CR/LF,
 * NULs, messages at and past maxMessageBytes, sent through the real UDP listener (one datagram each) and the real TCP
 * listener (a connection per sender: LF framing, octet counting, a broken octet count). Each case says what the
 * documented rules make of it (syslog/README.md): parsed, malformed and stored raw, malformed and not stored (nothing
 * left after trimming CR/LF/NUL), or oversized (dropped). Then:
 * - GET /listeners counters move by exactly the corpus (received, malformed, dropped);
 * - the stored rows from each sender are exactly the expected ones: malformed rows carry the raw text as sent (NULs
 *   as `\x00`, invalid UTF-8 as U+FFFD), parsed rows carry no raw;
 * - a good message sent after the junk (and on a fresh connection) is stored: the listeners survived.
 */
import { connect, type Socket } from "node:net";
import { fuzzSeed, makeRng, type Rng } from "../../../test/support/fuzz.js";
import { sendUdp } from "../../../test/support/syslogPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import { EventPipeline } from "../services/EventPipeline.js";

type Row = Record<string, unknown>;
type Counters = { received: number; dropped: number; malformed: number };

/** What the listener makes of one message. */
type Outcome = { kind: "parsed" } | { kind: "raw"; raw: string } | { kind: "empty" } | { kind: "oversized" };

interface Case {
  label: string;
  data: Buffer;
  outcome: Outcome;
}

const MAX = 8192; // maxMessageBytes (the default)
const SEED = fuzzSeed();
const FULL_5424 = '<165>1 2026-11-25T10:00:00.123Z fuzz-host fuzzapp 4242 ID47 [ex@32473 k="v\\"q" n="1"] the message';

let k: TestKernel;
let udpPort: number;
let tcpPort: number;

const parsed = (label: string, data: string | Buffer): Case => ({ label, data: Buffer.from(data), outcome: { kind: "parsed" } });
const raw = (label: string, data: string | Buffer, expected?: string): Case => {
  const b = Buffer.from(data);
  return { label, data: b, outcome: { kind: "raw", raw: expected ?? b.toString("utf8") } };
};
const empty = (label: string, data: string | Buffer): Case => ({ label, data: Buffer.from(data), outcome: { kind: "empty" } });
const oversized = (label: string, data: string | Buffer): Case => ({ label, data: Buffer.from(data), outcome: { kind: "oversized" } });

/** A BSD line of exactly `bytes` bytes. */
function lineOf(bytes: number, tag: string): string {
  const head = `<13>Nov 25 10:00:00 fuzz-host ${tag}: `;
  return head + "y".repeat(bytes - head.length);
}

/** The text a binary message is stored as: UTF-8 with invalid sequences replaced, each NUL as the four characters \x00. */
const escapedNul = (b: Buffer) => b.toString("utf8").split("\0").join("\\x00");

function randomBytes(rng: Rng, n: number, pick: () => number = () => rng.int(256)): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = pick();
  return b;
}

/** Random bytes holding a NUL inside, starting with a byte that is no digit (no octet count) and ending in a letter (nothing trimmed). */
function binaryWithNul(rng: Rng, maxLen: number): Case {
  const n = 3 + rng.int(maxLen - 3);
  const b = randomBytes(rng, n);
  b[0] = 0x80 + rng.int(128);
  b[1 + rng.int(n - 2)] = 0;
  b[n - 1] = 0x58;
  return raw("binary with a NUL", b, escapedNul(b));
}

/** Random bytes, at least half of them control bytes (no TAB, LF, CR, NUL), starting with one: binary by the control share. */
function controlJunk(rng: Rng, maxLen: number): Case {
  const n = 2 + rng.int(maxLen - 2);
  const controls = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 127];
  const b = randomBytes(rng, n, () => (rng.next() < 0.6 ? rng.pick(controls) : 32 + rng.int(95)));
  b[0] = 1;
  // At least half control bytes, whatever the draw.
  for (let i = 0; i < n; i += 2) if (b[i] >= 32 && b[i] !== 127) b[i] = rng.pick(controls);
  return raw("control bytes", b);
}

/** Mostly bytes that are never valid UTF-8 (0xF8–0xFF): binary by the share of replacement characters. */
function invalidUtf8(rng: Rng, maxLen: number): Case {
  const n = 2 + rng.int(maxLen - 2);
  const b = randomBytes(rng, n, () => (rng.next() < 0.7 ? 0xf8 + rng.int(8) : 0x61 + rng.int(26)));
  // At least half of them, whatever the draw.
  for (let i = 0; i < n; i += 2) b[i] = 0xf8 + rng.int(8);
  return raw("invalid UTF-8", b);
}

const INVALID_PRI = ["<999>bad pri", "<abc>letters", "no pri at all", "<0013>leading zero", "<192>too big", "<>no digits", "<1234>four digits", "13>no lt"];

/** Every truncation of a full RFC 5424 line: up to and right after the PRI it is malformed ("truncated"), then it parses (falling back). */
function truncations5424(): Case[] {
  const out: Case[] = [];
  for (let n = 1; n < FULL_5424.length; n++) {
    const text = FULL_5424.slice(0, n);
    if (text.endsWith(" ")) continue; // a trailing space: still parses, kept out only to keep the expectations plain
    out.push(n <= 5 ? raw(`5424 cut at ${n}`, text) : parsed(`5424 cut at ${n}`, text));
  }
  return out;
}

function udpCorpus(rng: Rng, marker: string): Case[] {
  const cases: Case[] = [
    empty("empty datagram", Buffer.alloc(0)),
    empty("lone CR", "\r"),
    empty("lone LF", "\n"),
    empty("CRLF", "\r\n"),
    empty("LF LF CR", "\n\n\r"),
    empty("one NUL", "\0"),
    empty("NULs", "\0\0\0"),
    empty("CR NUL LF", "\r\0\n"),
    raw("NUL inside", "<13>a\0b", "<13>a\\x00b"),
    raw("NUL first", "\0<13>lead", "\\x00<13>lead"),
    parsed("trailing NULs are trimmed", `<13>Nov 25 10:00:00 fuzz-host app: trailing nul ${marker}\0\0`),
    parsed("trailing CRLF is trimmed", `<13>Nov 25 10:00:00 fuzz-host app: trailing crlf ${marker}\r\n`),
    parsed("a lone CR inside", `<13>Nov 25 10:00:00 fuzz-host app: lone\rcr ${marker}`),
    ...INVALID_PRI.map((t) => raw(`invalid PRI ${t}`, t)),
    raw("only a PRI", "<13>"),
    raw("half a PRI", "<13"),
    ...truncations5424(),
    parsed("exactly maxMessageBytes", lineOf(MAX, "atmax")),
    oversized("one byte over", lineOf(MAX + 1, "over")),
    oversized("oversized 9000", `<13>${"o".repeat(9000)}`),
    oversized("oversized 65000", `<13>${"O".repeat(65000)}`),
  ];
  for (let i = 0; i < 40; i++) cases.push(binaryWithNul(rng, 600));
  for (let i = 0; i < 20; i++) cases.push(controlJunk(rng, 300));
  for (let i = 0; i < 20; i++) cases.push(invalidUtf8(rng, 300));
  for (let i = cases.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [cases[i], cases[j]] = [cases[j], cases[i]];
  }
  cases.push(parsed("the good one after the junk", `<14>Nov 25 10:00:00 fuzz-host app: alive after junk ${marker}`));
  return cases;
}

async function listenerCounters(name: string): Promise<Counters> {
  const res = await k.request("GET", "/listeners");
  expect(res.status).toBe(200);
  const l = (res.body as { listeners: Row[] }).listeners.find((x) => x.name === name);
  if (!l) throw new Error(`no listener ${name}`);
  const c = l.counters as Counters;
  return { received: c.received, dropped: c.dropped, malformed: c.malformed };
}

const diff = (a: Counters, b: Counters): Counters => ({
  received: a.received - b.received,
  dropped: a.dropped - b.dropped,
  malformed: a.malformed - b.malformed,
});

/** The counters a corpus must move. */
function expectedCounters(cases: Case[], extra: Partial<Counters> = {}): Counters {
  return {
    received: cases.length + (extra.received ?? 0),
    malformed: cases.filter((c) => c.outcome.kind === "raw" || c.outcome.kind === "empty").length + (extra.malformed ?? 0),
    dropped: cases.filter((c) => c.outcome.kind === "oversized").length + (extra.dropped ?? 0),
  };
}

async function storedFrom(address: string): Promise<Row[]> {
  await k.context("events").get(EventPipeline).flush();
  const res = await k.request("GET", `/events?src=${address}&limit=1000`);
  expect(res.status).toBe(200);
  return res.body as Row[];
}

/** The stored rows of a sender are exactly the expected ones: malformed ones by their raw text, parsed ones by count. */
async function expectStored(address: string, cases: Case[], transport: string): Promise<void> {
  const rows = await until(
    `the events from ${address}`,
    async () => {
      const r = await storedFrom(address);
      return r.length >= cases.filter((c) => c.outcome.kind === "raw" || c.outcome.kind === "parsed").length ? r : null;
    },
    20000,
  );
  const wantRaw = cases.flatMap((c) => (c.outcome.kind === "raw" ? [c.outcome.raw] : [])).sort();
  const gotMalformed = rows.filter((r) => r.malformed === true);
  expect({ seed: SEED, raws: gotMalformed.map((r) => r.raw as string).sort() }).toEqual({ seed: SEED, raws: wantRaw });
  for (const r of gotMalformed) {
    expect(r).toMatchObject({ kind: "syslog", transport, source_ip: address, message: r.raw, data: null, severity: null });
  }
  const gotParsed = rows.filter((r) => r.malformed === false);
  expect({ seed: SEED, parsed: gotParsed.length }).toEqual({ seed: SEED, parsed: cases.filter((c) => c.outcome.kind === "parsed").length });
  for (const r of gotParsed) expect(r).toMatchObject({ kind: "syslog", transport, source_ip: address, raw: null });
}

/** One TCP connection from `from`: writes `stream` in random chunks, ends, and waits until the listener closes it. */
async function tcpSender(from: string, stream: Buffer, rng: Rng): Promise<void> {
  const s: Socket = await new Promise((resolve, reject) => {
    const c = connect({ port: tcpPort, host: "127.0.0.1", localAddress: from }, () => resolve(c));
    c.once("error", reject);
  });
  s.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => s.once("close", () => resolve()));
  for (let i = 0; i < stream.length;) {
    const n = 1 + rng.int(4096);
    s.write(stream.subarray(i, i + n));
    i += n;
  }
  s.end();
  await closed;
}

beforeAll(async () => {
  console.log(`syslog listener fuzz: FUZZ_SEED=${SEED}`);
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: { pluginConfig: { events: { syslog: { udp: 0, tcp: 0, bindAddress: "127.0.0.1", maxMessageBytes: MAX }, flushMs: 50 } } },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: Row[] };
  udpPort = listeners.listeners.find((l) => l.name === "syslog.udp")!.port as number;
  tcpPort = listeners.listeners.find((l) => l.name === "syslog.tcp")!.port as number;
});

afterAll(async () => {
  await k?.stop();
});

describe("the UDP syslog listener under junk", () => {
  it("counts every datagram exactly, stores the junk raw as sent, and still stores a good message after it", async () => {
    const rng = makeRng(SEED);
    const from = "127.0.0.41";
    const marker = `udp-${SEED}`;
    const cases = udpCorpus(rng, marker);
    const before = await listenerCounters("syslog.udp");
    for (const c of cases) await sendUdp(udpPort, c.data, from);
    const want = expectedCounters(cases);
    const got = await until(
      "every datagram read",
      async () => {
        const d = diff(await listenerCounters("syslog.udp"), before);
        // malformed is counted when a worker parses the journaled message, a moment after it is received.
        return d.received >= want.received && d.malformed >= want.malformed ? d : null;
      },
      20000,
    );
    expect({ seed: SEED, counters: got }).toEqual({ seed: SEED, counters: want });
    await expectStored(from, cases, "udp");
    const good = (await storedFrom(from)).find((r) => r.message === `alive after junk ${marker}`);
    expect(good).toMatchObject({ malformed: false, app: "app", host: "fuzz-host", severity: 6 });
    const atMax = (await storedFrom(from)).filter((r) => String(r.message).startsWith("yyyy"));
    expect(atMax).toHaveLength(1);
    expect(atMax[0]).toMatchObject({ app: "atmax", malformed: false });
  });
});

describe("the TCP syslog listener under junk", () => {
  /** Frames of LF framing: each case's bytes hold no LF or NUL and start with no digit, CR, LF or NUL. */
  function lfCorpus(rng: Rng, marker: string): { stream: Buffer; cases: Case[] } {
    const cases: Case[] = [
      // (a frame starting with a digit is an octet count: "13>no lt" goes in the octet-counted corpus only)
      ...INVALID_PRI.filter((t) => !/^\d/.test(t)).map((t) => raw(`invalid PRI ${t}`, t)),
      raw("only a PRI", "<13>"),
      raw("half a PRI", "<13"),
      ...truncations5424(),
      parsed("a lone CR inside", `<13>Nov 25 10:00:00 fuzz-host app: lone\rcr ${marker}`),
      parsed("exactly maxMessageBytes", lineOf(MAX, "atmax")),
      oversized("one byte over", lineOf(MAX + 1, "over")),
      oversized("oversized 20000", `<13>${"z".repeat(20000)}`),
    ];
    for (let i = 0; i < 20; i++) cases.push(controlJunk(rng, 300));
    for (let i = 0; i < 20; i++) cases.push(invalidUtf8(rng, 300));
    for (let i = cases.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [cases[i], cases[j]] = [cases[j], cases[i]];
    }
    const parts: Buffer[] = [Buffer.from("\r\n\r\n\n")]; // stray terminators before the first frame: nothing
    for (const c of cases) {
      parts.push(c.data, Buffer.from(rng.next() < 0.2 ? "\0" : rng.next() < 0.3 ? "\n\r\n" : "\n"));
    }
    const tail = parsed("the last frame, without LF", `<14>Nov 25 10:00:00 fuzz-host app: unterminated last ${marker}`);
    parts.push(tail.data);
    cases.push(tail);
    return { stream: Buffer.concat(parts), cases };
  }

  /** Octet-counted frames: any bytes, LF and NUL included; the connection ends inside the last one. */
  function octetCorpus(rng: Rng, marker: string): { stream: Buffer; cases: Case[] } {
    const cases: Case[] = [
      empty("a lone LF", "\n"),
      empty("a lone CR", "\r"),
      empty("NULs", "\0\0\0"),
      empty("CRLF", "\r\n"),
      raw("NUL inside", "<13>a\0b", "<13>a\\x00b"),
      parsed("an LF inside", `<14>Nov 25 10:00:00 fuzz-host app: two\nlines ${marker}`),
      parsed("trailing NUL trimmed", `<14>Nov 25 10:00:00 fuzz-host app: trailing nul ${marker}\0`),
      ...INVALID_PRI.map((t) => raw(`invalid PRI ${t}`, t)),
      ...truncations5424(),
      parsed("exactly maxMessageBytes", lineOf(MAX, "atmax")),
      oversized("one byte over", lineOf(MAX + 1, "over")),
      oversized("oversized 100000", `<13>${"Z".repeat(100000)}`),
    ];
    for (let i = 0; i < 40; i++) cases.push(binaryWithNul(rng, 600));
    for (let i = 0; i < 10; i++) cases.push(invalidUtf8(rng, 300));
    for (let i = cases.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [cases[i], cases[j]] = [cases[j], cases[i]];
    }
    cases.push(parsed("a good frame", `<14>Nov 25 10:00:00 fuzz-host app: good octet frame ${marker}`));
    const parts = cases.map((c) => Buffer.concat([Buffer.from(`${c.data.length} `), c.data]));
    // The connection ends 8 bytes into a frame announced at 100: malformed, stored raw.
    const half = raw("cut by the connection's end", `<13>half`);
    parts.push(Buffer.from(`100 <13>half`));
    cases.push(half);
    return { stream: Buffer.concat(parts), cases };
  }

  it("LF framing, octet counting and a broken octet count, a connection per sender: exact counters, raw rows as sent, and still listening", async () => {
    const rng = makeRng(SEED ^ 0x5eed);
    const before = await listenerCounters("syslog.tcp");
    const lf = lfCorpus(rng, `lf-${SEED}`);
    const oc = octetCorpus(rng, `oc-${SEED}`);
    await tcpSender("127.0.0.42", lf.stream, rng);
    await tcpSender("127.0.0.43", oc.stream, rng);
    // A broken octet count closes the connection: counted malformed, nothing stored.
    await tcpSender("127.0.0.44", Buffer.from("12x34 <13>broken\n<13>never read\n"), rng);
    const want = expectedCounters([...lf.cases, ...oc.cases], { received: 1, malformed: 1 });
    const got = await until(
      "every frame read",
      async () => {
        const d = diff(await listenerCounters("syslog.tcp"), before);
        // malformed is counted when a worker parses the journaled message, a moment after it is received.
        return d.received >= want.received && d.malformed >= want.malformed ? d : null;
      },
      20000,
    );
    expect({ seed: SEED, counters: got }).toEqual({ seed: SEED, counters: want });
    await expectStored("127.0.0.42", lf.cases, "tcp");
    await expectStored("127.0.0.43", oc.cases, "tcp");
    expect(await storedFrom("127.0.0.44")).toEqual([]);

    // A fresh connection after all that is served.
    const after = `after-${SEED}`;
    await tcpSender("127.0.0.45", Buffer.from(`<14>Nov 25 10:00:00 fuzz-host app: still listening ${after}\n`), rng);
    const good = await until("the good message on a fresh connection", async () => (await storedFrom("127.0.0.45"))[0]);
    expect(good).toMatchObject({ malformed: false, message: `still listening ${after}`, transport: "tcp", listener: "syslog.tcp" });
    const final = diff(await listenerCounters("syslog.tcp"), before);
    expect(final).toEqual({ ...want, received: want.received + 1 });
  });
});
