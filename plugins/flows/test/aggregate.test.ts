/**
 * The minute aggregator's hash table against a plain string-keyed reference, and the decoder's IPv4 text cache: the
 * collector's hot path, rewritten for speed, must still sum exactly what a naive implementation sums.
 */
import { ipv4, ipv4Text } from "../decode/ip.js";
import type { FlowRecord } from "../decode/types.js";
import { ipv4Number } from "../../../core/index.js";
import { MinuteAggregator } from "../lib/aggregate.js";
import type { RollupRow } from "../repositories/rollupCopy.js";

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);

/** A fresh string each call (as the decoder used to make them), so equality never rests on one string object. */
const text = (s: string) => [...s].join("");

function rec(over: Partial<FlowRecord> = {}): FlowRecord {
  return {
    exporter: text("192.0.2.1"),
    version: 9,
    domain: 0,
    src: text("10.0.0.1"),
    dst: text("198.51.100.7"),
    proto: 6,
    src_port: 40000,
    dst_port: 443,
    src_as: 0,
    dst_as: 64500,
    bytes: 1000,
    packets: 10,
    raw_bytes: 1000,
    raw_packets: 10,
    sampling: 1,
    first_ms: T0 - 1000,
    last_ms: T0 + 5000,
    in_if: 1,
    out_if: 2,
    tcp_flags: 0x12,
    ...over,
  };
}

const keyOf = (r: RollupRow) => [r.at_ms, r.exporter, r.src, r.dst, r.proto, r.src_port, r.dst_port, r.src_as, r.dst_as].join("|");

/** The reference: one string key per record. */
function reference(records: FlowRecord[], nowMs: number): Map<string, [number, number, number]> {
  const out = new Map<string, [number, number, number]>();
  for (const r of records) {
    if (!r.src || !r.dst) continue;
    const end = r.last_ms !== null && Math.abs(r.last_ms - nowMs) < 86_400_000 ? r.last_ms : nowMs;
    const at = Math.floor(end / 60_000) * 60_000;
    const k = [at, r.exporter, r.src, r.dst, r.proto, r.src_port, r.dst_port, r.src_as, r.dst_as].join("|");
    const v = out.get(k) ?? [0, 0, 0];
    out.set(k, [v[0] + r.bytes, v[1] + r.packets, v[2] + 1]);
  }
  return out;
}

/** A small deterministic generator (xorshift32). */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

describe("MinuteAggregator", () => {
  it("sums records with the same key (distinct string objects) into one row, and keeps every key field apart", () => {
    const a = new MinuteAggregator(1000);
    expect(a.add(rec(), null, T0, "none")).toBe(true);
    expect(a.add(rec({ bytes: 500, packets: 5 }), { id: "n1", folder_path: ["f"] }, T0, "none")).toBe(true);
    // Each differs from the first in one key field: a row each.
    const others: Partial<FlowRecord>[] = [
      { src: "10.0.0.2" },
      { dst: "198.51.100.8" },
      { exporter: "192.0.2.2" },
      { proto: 17 },
      { src_port: 40001 },
      { dst_port: 80 },
      { src_as: 1 },
      { dst_as: 64501 },
      { last_ms: T0 + 65_000 },
    ];
    for (const o of others) expect(a.add(rec(o), null, T0, "none")).toBe(true);
    const { rollups, exporters } = a.take();
    expect(rollups).toHaveLength(1 + others.length);
    const first = rollups.find((r) => keyOf(r) === keyOf(rollups[0]))!;
    expect(first).toMatchObject({ at_ms: T0, bytes: 1500, packets: 15, flows: 2, node_id: null });
    expect(new Set(rollups.map(keyOf)).size).toBe(rollups.length);
    expect(exporters.find((e) => e.address === "192.0.2.1")).toMatchObject({ records: 10, bytes: 9_500, packets: 95 });
  });

  it("files a record without a usable end time at arrival, and refuses one without both addresses", () => {
    const a = new MinuteAggregator(10);
    expect(a.add(rec({ last_ms: null }), null, T0 + 30_000, "none")).toBe(true);
    expect(a.add(rec({ last_ms: T0 + 3 * 86_400_000 }), null, T0 + 30_000, "none")).toBe(true);
    expect(a.add(rec({ src: "" }), null, T0, "none")).toBe(false);
    const { rollups } = a.take();
    expect(rollups).toHaveLength(1);
    expect(rollups[0]).toMatchObject({ at_ms: T0, flows: 2 });
  });

  it("equals the string-keyed reference on 200,000 random records over 60,000 keys (the table grows many times)", () => {
    const pick = rng(7);
    const records: FlowRecord[] = [];
    for (let i = 0; i < 200_000; i++)
      records.push(
        rec({
          exporter: `192.0.2.${1 + pick(4)}`,
          src: `10.0.${pick(10)}.${pick(30)}`,
          dst: pick(5) === 0 ? `2001:db8::${pick(20).toString(16)}` : `198.51.100.${pick(10)}`,
          proto: [6, 17, 1][pick(3)],
          src_port: pick(4),
          dst_port: [53, 443][pick(2)],
          src_as: pick(2),
          dst_as: pick(2) * 64500,
          bytes: 1 + pick(1500),
          packets: 1 + pick(10),
          last_ms: T0 + pick(3) * 60_000,
        }),
      );
    const a = new MinuteAggregator(1_000_000);
    let refused = 0;
    for (const r of records) if (!a.add(r, null, T0, "none")) refused++;
    expect(refused).toBe(0);
    const want = reference(records, T0);
    const { rollups } = a.take();
    expect(rollups.length).toBe(want.size);
    expect(rollups.length).toBeGreaterThan(30_000);
    const wrong = rollups.filter((r) => JSON.stringify([r.bytes, r.packets, r.flows]) !== JSON.stringify(want.get(keyOf(r))));
    expect(wrong).toEqual([]);
  });

  it("keys an IPv4 address the same whether the caller gives its number or only its text", () => {
    const pick = rng(11);
    const records: FlowRecord[] = [];
    for (let i = 0; i < 20_000; i++)
      records.push(
        rec({
          src: `10.${pick(3)}.${pick(4)}.${pick(200)}`,
          dst: pick(4) === 0 ? `2001:db8::${pick(30).toString(16)}` : `198.51.100.${pick(30)}`,
          src_port: pick(3),
          bytes: 1 + pick(1500),
        }),
      );
    const a = new MinuteAggregator(1_000_000);
    records.forEach((r, i) => {
      // Every other record comes with the numbers the decoder would pass; the rest with texts only.
      const numbers = i % 2 === 0;
      expect(a.add(r, null, T0, "none", numbers ? ipv4Number(r.src) : -1, numbers ? ipv4Number(r.dst) : -1)).toBe(true);
    });
    const want = reference(records, T0);
    const { rollups } = a.take();
    expect(rollups.length).toBe(want.size);
    expect(rollups.filter((r) => JSON.stringify([r.bytes, r.packets, r.flows]) !== JSON.stringify(want.get(keyOf(r))))).toEqual([]);
  });

  it("takes a record whose IPv4 addresses come as numbers only (a decoder sink's), and writes their texts", () => {
    const a = new MinuteAggregator(10);
    expect(a.add(rec({ src: "", dst: "" }), null, T0, "none", 0x0a000001, 0xc6336407)).toBe(true);
    expect(a.add(rec(), null, T0, "none")).toBe(true);
    expect(a.add(rec({ src: "" }), null, T0, "none", -1, 0xc6336407)).toBe(false);
    const { rollups } = a.take();
    expect(rollups).toEqual([expect.objectContaining({ src: "10.0.0.1", dst: "198.51.100.7", flows: 2 })]);
  });

  it("refuses a new key past maxKeys but still sums known ones; take() starts afresh", () => {
    const a = new MinuteAggregator(3);
    for (let p = 0; p < 3; p++) expect(a.add(rec({ src_port: p }), null, T0, "none")).toBe(true);
    expect(a.add(rec({ src_port: 99 }), null, T0, "none")).toBe(false);
    expect(a.add(rec({ src_port: 1 }), null, T0, "none")).toBe(true);
    expect(a.size).toBe(3);
    const first = a.take().rollups;
    expect(first.find((r) => r.src_port === 1)!.flows).toBe(2);
    expect(a.size).toBe(0);
    expect(a.add(rec({ src_port: 99 }), null, T0, "none")).toBe(true);
    const second = a.take().rollups;
    expect(second).toHaveLength(1);
    expect(second[0]).toMatchObject({ src_port: 99, flows: 1 });
    // The rows handed out earlier are not touched by later adds.
    expect(first.find((r) => r.src_port === 1)!.flows).toBe(2);
  });
});

describe("ipv4Text (the decoder's address text cache)", () => {
  const set = (n: number) => (Math.imul(n | 0, 0x9e3779b1) >>> 16) & 0xffff;
  const quad = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

  it("gives the dotted quad of every address, from cache or not, signed or unsigned", () => {
    for (const [n, want] of [
      [0, "0.0.0.0"],
      [0xffffffff, "255.255.255.255"],
      [-1, "255.255.255.255"],
      [0x0a000001, "10.0.0.1"],
      [0xc0000201, "192.0.2.1"],
      [0x80000000, "128.0.0.0"],
    ] as const) {
      expect(ipv4Text(n)).toBe(want);
      expect(ipv4Text(n)).toBe(want);
    }
    const v = new DataView(new ArrayBuffer(4));
    v.setUint32(0, 0xc6336407);
    expect(ipv4(v, 0)).toBe("198.51.100.7");
  });

  it("three addresses sharing a cache set, read in turn, each keep their own text", () => {
    const same = [0x0a000001];
    for (let b = same[0] + 1; same.length < 3; b++) if (set(b) === set(same[0])) same.push(b);
    for (let i = 0; i < 3; i++) for (const n of same) expect(ipv4Text(n)).toBe(quad(n));
  });
});
