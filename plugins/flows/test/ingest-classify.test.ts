/**
 * Which datagrams every decoder thread must see (TemplateSpread), and the decoder's learn-only reading of them: the
 * templates and the options data (sampling) are learned, the flow records are left to the decoder that has the
 * datagram whole.
 */
import { FlowDecoder, type FlowRecord } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import { TemplateSpread } from "../ingest/classify.js";
import { dataSet, ip4, ipfixMessage, optionsTemplateSet, templateSet, u, v9Packet, type FieldSpec } from "../../../test/support/flowPeers.js";

const EXP = "192.0.2.7";
const NOW = Date.UTC(2026, 10, 29, 6, 0, 0);
const SECS = NOW / 1000;
const T: FieldSpec[] = [
  { id: 8, length: 4 },
  { id: 12, length: 4 },
  { id: 1, length: 4 },
  { id: 2, length: 4 },
];
const rec = (bytes: number) => Buffer.concat([ip4("10.0.0.1"), ip4("10.0.0.2"), u(4, bytes), u(4, 1)]);
const ipfix = (sets: Buffer[], domain = 1) => ipfixMessage({ domain, exportSecs: SECS }, sets);
const v9 = (sets: Buffer[], sourceId = 1) => v9Packet({ sourceId, uptimeMs: 100_000, unixSecs: SECS }, sets);
const every = (s: TemplateSpread, b: Buffer, exporter = EXP) => s.everyDecoder(b, b.length, exporter);

describe("TemplateSpread", () => {
  it("sends template sets and withdrawals to every decoder, plain data and v5 to one", () => {
    const s = new TemplateSpread();
    expect(every(s, ipfix([templateSet(10, [{ id: 256, fields: T }])]))).toBe(true);
    expect(every(s, ipfix([dataSet(256, [rec(1)])]))).toBe(false);
    expect(every(s, ipfix([templateSet(10, [{ id: 256, fields: [] }])]))).toBe(true);
    expect(every(s, v9([templateSet(9, [{ id: 300, fields: T }]), dataSet(300, [rec(1)])]))).toBe(true);
    expect(every(s, v9([dataSet(300, [rec(1)])]))).toBe(false);
    const v5 = Buffer.alloc(24 + 48);
    v5.writeUInt16BE(5, 0);
    expect(every(s, v5)).toBe(false);
    expect(every(s, Buffer.from([0, 10, 0]))).toBe(false);
  });

  it("knows options data by the options template ids seen before, per exporter and domain", () => {
    const s = new TemplateSpread();
    const opts = ipfix([optionsTemplateSet(10, 400, [{ id: 149, length: 4 }], [{ id: 34, length: 4 }])]);
    const optData = ipfix([dataSet(400, [Buffer.concat([u(4, 1), u(4, 100)])])]);
    // Before the options template is seen, its data cannot be told from flow data.
    expect(every(s, optData)).toBe(false);
    expect(every(s, opts)).toBe(true);
    expect(every(s, optData)).toBe(true);
    // Another domain or exporter has its own ids.
    expect(every(s, ipfix([dataSet(400, [rec(1)])], 2))).toBe(false);
    expect(every(s, optData, "192.0.2.8")).toBe(false);
    // v9 options templates (set id 1) too.
    expect(every(s, v9([optionsTemplateSet(9, 500, [{ id: 1, length: 4 }], [{ id: 34, length: 4 }])]))).toBe(true);
    expect(every(s, v9([dataSet(500, [Buffer.concat([u(4, 1), u(4, 10)])])]))).toBe(true);
    expect(every(s, v9([dataSet(501, [rec(1)])]))).toBe(false);
  });

  it("a set header that overruns the datagram ends the walk without throwing", () => {
    const s = new TemplateSpread();
    const b = ipfix([dataSet(256, [rec(1)])]);
    b.writeUInt16BE(9999, 18); // the set's length past the end
    expect(every(s, b)).toBe(false);
  });
});

describe("the decoder's learn-only reading", () => {
  it("learns templates and the sampling rate, emits and holds nothing; the whole datagram's decoder emits the records", () => {
    const whole = new FlowDecoder({ templates: new TemplateCache() });
    const copy = new FlowDecoder({ templates: new TemplateCache() });
    const first = ipfix([
      templateSet(10, [{ id: 256, fields: T }]),
      optionsTemplateSet(10, 400, [{ id: 149, length: 4 }], [{ id: 34, length: 4 }]),
      dataSet(400, [Buffer.concat([u(4, 1), u(4, 100)])]),
      dataSet(256, [rec(10)]),
    ]);
    const a = whole.decode(first, EXP, NOW);
    const b = copy.decode(first, EXP, NOW, undefined, true);
    expect(a.records).toHaveLength(1);
    expect(b.records).toHaveLength(0);
    expect(b.pending).toBe(0);
    expect(b.templatesLearned.map((k) => k.id).sort()).toEqual([256, 400]);
    // Later data decoded by the learn-only copy's decoder carries the sampling rate it learned.
    const got: FlowRecord[] = copy.decode(ipfix([dataSet(256, [rec(7)])]), EXP, NOW).records;
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ sampling: 100, bytes: 700, raw_bytes: 7 });
    // Data for a template neither has is not held by a learn-only reading.
    expect(copy.decode(ipfix([dataSet(999, [rec(1)])]), EXP, NOW, undefined, true)).toMatchObject({ pending: 0, records: [] });
    expect(copy.stats().pendingNow).toBe(0);
  });
});
