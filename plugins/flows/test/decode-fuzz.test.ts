/**
 * Malformed input never throws: random bytes, every truncation and single-byte mutations of real softflowd datagrams
 * (v5, v9, IPFIX), and hand-made faults (truncated headers, set lengths of 0 or past the end, absurd field counts).
 * Each is counted malformed where it can be told apart, and valid datagrams decode exactly as before afterwards.
 */
import { join } from "node:path";
import { FlowDecoder } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import type { DecodeResult } from "../decode/types.js";
import {
  cleanupFlowPeers,
  flowTempDir,
  generateTraffic,
  ipfixMessage,
  runSoftflowd,
  u,
  udpSink,
  v9Packet,
  writePcap,
} from "../../../test/support/flowPeers.js";

afterAll(cleanupFlowPeers);

const EXP = "127.0.0.1";
const NOW = Date.now();
const captured = new Map<number, Buffer[]>();

beforeAll(async () => {
  const dir = flowTempDir();
  const pcap = join(dir, "fuzz.pcap");
  writePcap(pcap, generateTraffic(120, { v6Every: 4 }).packets);
  for (const version of [5, 9, 10] as const) {
    const sink = await udpSink();
    await runSoftflowd({ version, pcap, port: sink.port });
    captured.set(
      version,
      (await sink.settle(1, 300)).map((d) => d.data),
    );
    await sink.close();
  }
});

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function summary(decoder: FlowDecoder, datagrams: readonly Buffer[]): { records: number; packets: number; bytes: number; malformed: number } {
  let records = 0;
  let packets = 0;
  let bytes = 0;
  let malformed = 0;
  for (const d of datagrams) {
    const r = decoder.decode(d, EXP, NOW);
    if (r.malformed) malformed++;
    for (const x of r.records) {
      records++;
      packets += x.packets;
      bytes += x.bytes;
    }
  }
  return { records, packets, bytes, malformed };
}

function safeDecode(decoder: FlowDecoder, buf: Buffer): DecodeResult {
  try {
    return decoder.decode(buf, EXP, NOW);
  } catch (err) {
    throw new Error(`decode threw on ${buf.toString("hex")}: ${String(err)}`);
  }
}

describe.each([5, 9, 10] as const)("v%s datagrams from softflowd", (version) => {
  it("every truncation: never throws, counted malformed (v5 and IPFIX always), valid datagrams still decode", () => {
    const datagrams = captured.get(version) ?? [];
    expect(datagrams.length).toBeGreaterThan(0);
    const decoder = new FlowDecoder({ templates: new TemplateCache() });
    const baseline = summary(decoder, datagrams);
    expect(baseline).toMatchObject({ malformed: 0 });
    expect(baseline.records).toBeGreaterThan(0);
    let tried = 0;
    let malformed = 0;
    const before = decoder.stats().malformed;
    for (const d of datagrams) {
      for (let len = 0; len < d.length; len++) {
        const r = safeDecode(decoder, d.subarray(0, len));
        tried++;
        if (r.malformed) malformed++;
      }
    }
    expect(decoder.stats().malformed - before).toBe(malformed);
    // v9 has no length in its header: a cut exactly between two flowsets is a valid, shorter packet.
    if (version === 9) expect(malformed).toBeGreaterThan(tried * 0.9);
    else expect(malformed).toBe(tried);
    expect(summary(decoder, datagrams)).toEqual(baseline);
  });

  it("single-byte mutations at every position: never throws; the originals decode as before afterwards", () => {
    const datagrams = captured.get(version) ?? [];
    const decoder = new FlowDecoder({ templates: new TemplateCache() });
    const baseline = summary(decoder, datagrams);
    const rand = rng(version);
    let malformed = 0;
    for (const d of datagrams) {
      for (let i = 0; i < d.length; i++) {
        const m = Buffer.from(d);
        m[i] = (m[i] + 1 + Math.floor(rand() * 255)) & 255;
        if (safeDecode(decoder, m).malformed) malformed++;
      }
    }
    expect(malformed).toBeGreaterThan(0);
    // Mutated templates may have been learned; the originals carry the real ones again (IPFIX/v9 send them first).
    decoder.expire(NOW + 10 * 60_000);
    expect(summary(decoder, datagrams)).toEqual(baseline);
  });
});

describe("random and hand-made faults", () => {
  it("random bytes (and random bytes behind a valid version number) never throw", () => {
    const rand = rng(7);
    const decoder = new FlowDecoder({ templates: new TemplateCache(), pendingMaxSets: 100 });
    let malformed = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const b = Buffer.alloc(Math.floor(rand() * 1500));
      for (let j = 0; j < b.length; j++) b[j] = Math.floor(rand() * 256);
      if (b.length >= 2 && i % 4 !== 0) b.writeUInt16BE([5, 9, 10][i % 3], 0);
      if (safeDecode(decoder, b).malformed) malformed++;
    }
    expect(decoder.stats().malformed).toBe(malformed);
    expect(malformed).toBeGreaterThan(n * 0.9);
    expect(decoder.stats().pendingNow).toBeLessThanOrEqual(100);
    // Still decodes real data.
    const v9 = captured.get(9) ?? [];
    expect(summary(new FlowDecoder({ templates: new TemplateCache() }), v9).records).toBe(summary(decoder, v9).records);
  });

  it.each([
    ["empty", Buffer.alloc(0)],
    ["unknown version", Buffer.concat([u(2, 7), Buffer.alloc(30)])],
    ["v5 header cut", Buffer.concat([u(2, 5), u(2, 1), Buffer.alloc(10)])],
    ["v5 count past the end", Buffer.concat([u(2, 5), u(2, 2), Buffer.alloc(20 + 48)])],
    ["v5 count over 30", Buffer.concat([u(2, 5), u(2, 31), Buffer.alloc(20 + 31 * 48)])],
    ["v9 header cut", Buffer.concat([u(2, 9), Buffer.alloc(17)])],
    ["v9 zero-length flowset", v9Packet({ sourceId: 1, uptimeMs: 1, unixSecs: 1 }, [Buffer.concat([u(2, 256), u(2, 0), Buffer.alloc(8)])])],
    ["v9 flowset past the end", v9Packet({ sourceId: 1, uptimeMs: 1, unixSecs: 1 }, [Buffer.concat([u(2, 256), u(2, 400), Buffer.alloc(8)])])],
    [
      "v9 template with 65535 fields",
      v9Packet({ sourceId: 1, uptimeMs: 1, unixSecs: 1 }, [Buffer.concat([u(2, 0), u(2, 16), u(2, 256), u(2, 65535), u(2, 8), u(2, 4), u(2, 12), u(2, 4)])]),
    ],
    [
      "v9 template with a 0-length field",
      v9Packet({ sourceId: 1, uptimeMs: 1, unixSecs: 1 }, [Buffer.concat([u(2, 0), u(2, 12), u(2, 256), u(2, 1), u(2, 8), u(2, 0)])]),
    ],
    [
      "v9 template id below 256",
      v9Packet({ sourceId: 1, uptimeMs: 1, unixSecs: 1 }, [Buffer.concat([u(2, 0), u(2, 12), u(2, 200), u(2, 1), u(2, 8), u(2, 4)])]),
    ],
    ["IPFIX header cut", Buffer.concat([u(2, 10), u(2, 16), Buffer.alloc(8)])],
    ["IPFIX length past the datagram", Buffer.concat([u(2, 10), u(2, 100), Buffer.alloc(12)])],
    ["IPFIX zero-length set", ipfixMessage({ domain: 0, exportSecs: 1 }, [Buffer.concat([u(2, 256), u(2, 0), Buffer.alloc(4)])])],
    ["IPFIX set past the message", ipfixMessage({ domain: 0, exportSecs: 1 }, [Buffer.concat([u(2, 2), u(2, 64), Buffer.alloc(8)])])],
    ["IPFIX set id 1", ipfixMessage({ domain: 0, exportSecs: 1 }, [Buffer.concat([u(2, 1), u(2, 8), Buffer.alloc(4)])])],
    [
      "IPFIX template with 16384 fields",
      ipfixMessage({ domain: 0, exportSecs: 1 }, [Buffer.concat([u(2, 2), u(2, 12), u(2, 256), u(2, 16384), u(2, 8), u(2, 4)])]),
    ],
    ["IPFIX enterprise field cut", ipfixMessage({ domain: 0, exportSecs: 1 }, [Buffer.concat([u(2, 2), u(2, 12), u(2, 256), u(2, 1), u(2, 0x8001), u(2, 4)])])],
    [
      "IPFIX options template with 0 scope fields",
      ipfixMessage({ domain: 0, exportSecs: 1 }, [Buffer.concat([u(2, 3), u(2, 14), u(2, 256), u(2, 1), u(2, 0), u(2, 34), u(2, 4)])]),
    ],
  ])("%s: malformed, counted, no throw", (_name, buf) => {
    const decoder = new FlowDecoder({ templates: new TemplateCache() });
    const r = safeDecode(decoder, buf);
    expect(r.malformed).toBe(true);
    expect(decoder.stats().malformed).toBe(1);
    expect(decoder.stats().templates).toBe(0);
  });
});
