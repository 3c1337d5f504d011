/** The RFC 6587 frame decoder: both framings, limits and resync, chunk boundaries anywhere. */
import { SyslogFrameDecoder, type FrameSink } from "../syslog/framing.js";

/** Collects what the decoder reports, copying frames (they may share the chunk's memory). */
class Collector implements FrameSink {
  frames: string[] = [];
  oversizes: number[] = [];
  truncations: string[] = [];
  frame(data: Buffer): void {
    this.frames.push(data.toString("latin1"));
  }
  oversized(bytes: number): void {
    this.oversizes.push(bytes);
  }
  truncated(data: Buffer): void {
    this.truncations.push(data.toString("latin1"));
  }
}

function decode(chunks: (string | Buffer)[], max = 100, maxSkipBytes?: number): { c: Collector; ok: boolean; error: string | null } {
  const d = new SyslogFrameDecoder({ maxMessageBytes: max, maxSkipBytes });
  const c = new Collector();
  let ok = true;
  for (const chunk of chunks) {
    ok = d.push(typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk, c);
    if (!ok) break;
  }
  if (ok) d.finish(c);
  return { c, ok, error: d.error };
}

const octet = (m: string) => `${Buffer.byteLength(m, "latin1")} ${m}`;

describe("SyslogFrameDecoder", () => {
  it("splits LF-framed messages, many in one chunk, skipping empty lines and CRLF leftovers", () => {
    const { c, ok } = decode(["<13>a\n<14>b\n\n<15>c\r\n"]);
    expect(ok).toBe(true);
    expect(c.frames).toEqual(["<13>a", "<14>b", "<15>c\r"]);
  });

  it("accepts NUL as a terminator too", () => {
    expect(decode(["<13>a\0<14>b\0"]).c.frames).toEqual(["<13>a", "<14>b"]);
    expect(decode(["<13>a\0<14>b\n<15>c\0"]).c.frames).toEqual(["<13>a", "<14>b", "<15>c"]);
  });

  it("reads octet-counted frames (including ones holding LF), and mixed framings frame by frame", () => {
    const m1 = "<13>1 - - - - - line one\nstill one";
    const { c } = decode([octet(m1) + octet("<14>two") + "<15>lf three\n" + octet("<16>four")]);
    expect(c.frames).toEqual([m1, "<14>two", "<15>lf three", "<16>four"]);
  });

  it("joins frames split across chunks, at every position", () => {
    const stream = octet("<13>first") + "<14>second\n" + octet("<15>third with more text") + "<16>fourth\n";
    for (let cut = 0; cut <= stream.length; cut++) {
      for (let cut2 = cut; cut2 <= stream.length; cut2 += 7) {
        const { c } = decode([stream.slice(0, cut), stream.slice(cut, cut2), stream.slice(cut2)]);
        expect(c.frames).toEqual(["<13>first", "<14>second", "<15>third with more text", "<16>fourth"]);
      }
    }
  });

  it("survives a random split of a long mixed stream into many chunks (seeded)", () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const expected: string[] = [];
    let stream = "";
    for (let k = 0; k < 2000; k++) {
      const body = `<${k % 192}>msg ${k} ` + "x".repeat(rnd(90));
      expected.push(body);
      stream += rnd(2) === 0 ? octet(body) : body + (rnd(3) === 0 ? "\0" : "\n");
    }
    const bytes = Buffer.from(stream, "latin1");
    for (let round = 0; round < 5; round++) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length;) {
        const len = 1 + rnd(round % 2 === 0 ? 5 : 400);
        chunks.push(Buffer.from(bytes.subarray(i, i + len)));
        i += len;
      }
      const { c, ok } = decode(chunks, 200);
      expect(ok).toBe(true);
      expect(c.frames).toEqual(expected);
    }
  });

  it("does not keep references into a chunk after push() returns", () => {
    const d = new SyslogFrameDecoder({ maxMessageBytes: 100 });
    const c = new Collector();
    const a = Buffer.from("10 <13>ab");
    const b = Buffer.from("<14>partial");
    d.push(a, c);
    a.fill(0x78);
    d.push(Buffer.from("cdef"), c);
    d.push(b, c);
    b.fill(0x78);
    d.push(Buffer.from(" line\n"), c);
    expect(c.frames).toEqual(["<13>abcdef", "<14>partial line"]);
  });

  it("skips an oversized LF frame to the next LF and goes on", () => {
    const big = "<13>" + "y".repeat(150);
    const { c, ok } = decode(["<13>ok1\n" + big.slice(0, 60), big.slice(60, 120), big.slice(120) + "\n<13>ok2\n"]);
    expect(ok).toBe(true);
    expect(c.frames).toEqual(["<13>ok1", "<13>ok2"]);
    expect(c.oversizes).toHaveLength(1);
    expect(c.oversizes[0]).toBeGreaterThan(100);
    // Exactly max bytes still passes.
    expect(decode(["<13>" + "z".repeat(96) + "\n"]).c.frames).toHaveLength(1);
    expect(decode(["<13>" + "z".repeat(97) + "\n"]).c.oversizes).toEqual([101]);
  });

  it("skips the announced bytes of an oversized octet-counted frame and resyncs", () => {
    const big = "<13>" + "q".repeat(196);
    const { c, ok } = decode([octet("<13>a") + octet(big).slice(0, 50), octet(big).slice(50) + octet("<13>b")]);
    expect(ok).toBe(true);
    expect(c.frames).toEqual(["<13>a", "<13>b"]);
    expect(c.oversizes).toEqual([200]);
  });

  it("gives up on malformed or absurd octet counts", () => {
    for (const [chunk, why] of [
      ["12x<13>abc", "malformed octet count"],
      ["0 <13>", "leading zero"],
      ["1234567890 <13>", "too long"],
      ["5000000 <13>", "beyond"],
    ]) {
      const r = decode([chunk], 100);
      expect(r.ok).toBe(false);
      expect(r.error).toContain(why);
    }
    // After giving up, more data is refused.
    const d = new SyslogFrameDecoder({ maxMessageBytes: 100 });
    const c = new Collector();
    expect(d.push(Buffer.from("9x"), c)).toBe(false);
    expect(d.push(Buffer.from("<13>a\n"), c)).toBe(false);
    expect(c.frames).toEqual([]);
  });

  it("at the end delivers an unterminated LF frame, and reports a partial octet frame or header as truncated", () => {
    expect(decode(["<13>a\n<13>no newline"]).c.frames).toEqual(["<13>a", "<13>no newline"]);
    const r = decode(["30 <13>half"]);
    expect(r.c.frames).toEqual([]);
    expect(r.c.truncations).toEqual(["<13>half"]);
    expect(decode(["<13>a\n12"]).c.truncations).toEqual(["12"]);
    expect(decode(["<13>a\n"]).c.truncations).toEqual([]);
  });

  it("hands junk without a PRI through as LF frames (the parser rejects it), binary included", () => {
    const { c, ok } = decode([Buffer.from([0xff, 0xfe, 0x01, 0x0a]), "hello\n<13>x\n"]);
    expect(ok).toBe(true);
    expect(c.frames).toEqual(["\xff\xfe\x01", "hello", "<13>x"]);
  });
});
