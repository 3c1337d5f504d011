/**
 * Templates, options and the less common encodings, on hand-built v9 / IPFIX packets: template scope (exporter,
 * version, domain, id), refresh, withdrawal, export/import through JSON (a restart between template and data), data
 * held until its template and dropped when too old or too many, variable-length and enterprise fields, counter widths
 * and 64-bit clamping, every time encoding, sampling from options records and overrides, IPv6 text.
 */
import { copyRecord, FlowDecoder, type FlowRecord } from "../decode/decoder.js";
import { TemplateCache } from "../decode/templates.js";
import { dataSet, ip4, ip6, ipfixMessage, optionsTemplateSet, templateSet, u, v9Packet, varlen, type FieldSpec } from "../../../test/support/flowPeers.js";

const EXP = "192.0.2.200";
const NOW = Date.UTC(2026, 10, 24, 6, 0, 0);
const SECS = NOW / 1000;

// IPFIX data template 256: src, dst, proto, ports, octets (8), packets (8), flowStart/EndMilliseconds.
const T256: FieldSpec[] = [
  { id: 8, length: 4 },
  { id: 12, length: 4 },
  { id: 4, length: 1 },
  { id: 7, length: 2 },
  { id: 11, length: 2 },
  { id: 1, length: 8 },
  { id: 2, length: 8 },
  { id: 152, length: 8 },
  { id: 153, length: 8 },
];

function rec256(
  src: string,
  dst: string,
  proto: number,
  sport: number,
  dport: number,
  bytes: number | bigint,
  packets: number,
  first = NOW - 5000,
  last = NOW - 1000,
): Buffer {
  return Buffer.concat([ip4(src), ip4(dst), u(1, proto), u(2, sport), u(2, dport), u(8, bytes), u(8, packets), u(8, first), u(8, last)]);
}

function newDecoder(opts: Partial<ConstructorParameters<typeof FlowDecoder>[0]> = {}): { templates: TemplateCache; decoder: FlowDecoder } {
  const templates = opts.templates ?? new TemplateCache();
  return { templates, decoder: new FlowDecoder({ templates, ...opts }) };
}

const tmpl = (domain = 1): Buffer => ipfixMessage({ domain, exportSecs: SECS }, [templateSet(10, [{ id: 256, fields: T256 }])]);
const data = (domain = 1, ...records: Buffer[]): Buffer =>
  ipfixMessage({ domain, exportSecs: SECS }, [dataSet(256, records.length ? records : [rec256("192.0.2.1", "198.51.100.1", 6, 40000, 443, 1500, 3)])]);

describe("template cache and data", () => {
  it("decodes data whose template came in an earlier packet; only new or changed templates are reported", () => {
    const { decoder } = newDecoder();
    const first = decoder.decode(tmpl(), EXP, NOW);
    expect(first.templatesLearned).toEqual([{ exporter: EXP, version: 10, domain: 1, id: 256 }]);
    expect(first.records).toEqual([]);
    const r = decoder.decode(data(), EXP, NOW);
    expect(r.malformed).toBe(false);
    expect(r.records).toEqual([
      {
        exporter: EXP,
        version: 10,
        domain: 1,
        src: "192.0.2.1",
        dst: "198.51.100.1",
        proto: 6,
        src_port: 40000,
        dst_port: 443,
        src_as: 0,
        dst_as: 0,
        bytes: 1500,
        packets: 3,
        raw_bytes: 1500,
        raw_packets: 3,
        sampling: 1,
        first_ms: NOW - 5000,
        last_ms: NOW - 1000,
        in_if: null,
        out_if: null,
        tcp_flags: null,
      },
    ]);
    // The same template again (a refresh) is not news; a changed one is, and replaces it.
    expect(decoder.decode(tmpl(), EXP, NOW).templatesLearned).toEqual([]);
    const changed = ipfixMessage({ domain: 1, exportSecs: SECS }, [templateSet(10, [{ id: 256, fields: T256.slice(0, 5) }])]);
    expect(decoder.decode(changed, EXP, NOW).templatesLearned).toHaveLength(1);
    const short = ipfixMessage({ domain: 1, exportSecs: SECS }, [
      dataSet(256, [Buffer.concat([ip4("192.0.2.9"), ip4("192.0.2.10"), u(1, 17), u(2, 53), u(2, 53)])]),
    ]);
    expect(decoder.decode(short, EXP, NOW).records[0]).toMatchObject({ src: "192.0.2.9", proto: 17, bytes: 0, first_ms: null });
  });

  it("keys templates by exporter, version and domain: the same id means different layouts", () => {
    const { decoder, templates } = newDecoder();
    decoder.decode(tmpl(1), EXP, NOW);
    // Domain 2 of the same exporter and another exporter use id 256 for IPv6 flows.
    const v6: FieldSpec[] = [
      { id: 27, length: 16 },
      { id: 28, length: 16 },
      { id: 4, length: 1 },
      { id: 1, length: 4 },
      { id: 2, length: 4 },
    ];
    const v6rec = Buffer.concat([ip6("2001:db8::1"), ip6("2001:db8::2"), u(1, 58), u(4, 64), u(4, 1)]);
    for (const [exp, domain] of [
      [EXP, 2],
      ["2001:db8::99", 1],
    ] as const) {
      decoder.decode(ipfixMessage({ domain, exportSecs: SECS }, [templateSet(10, [{ id: 256, fields: v6 }])]), exp, NOW);
      expect(decoder.decode(ipfixMessage({ domain, exportSecs: SECS }, [dataSet(256, [v6rec])]), exp, NOW).records[0]).toMatchObject({
        exporter: exp,
        domain,
        src: "2001:db8::1",
        dst: "2001:db8::2",
        proto: 58,
        bytes: 64,
      });
    }
    expect(decoder.decode(data(1), EXP, NOW).records[0]).toMatchObject({ domain: 1, src: "192.0.2.1" });
    expect(templates.counts()).toEqual({ [EXP]: 2, "2001:db8::99": 1 });
    // A v9 packet with source id 1 does not see the IPFIX template 256 of domain 1.
    const v9data = v9Packet({ sourceId: 1, uptimeMs: 1000, unixSecs: SECS }, [dataSet(256, [rec256("192.0.2.1", "192.0.2.2", 6, 1, 2, 3, 4)])]);
    expect(decoder.decode(v9data, EXP, NOW)).toMatchObject({ records: [], pending: 1 });
  });

  it("export -> JSON -> import into a fresh cache: a restarted collector decodes data at once, and the JSON round-trips exactly", () => {
    const a = newDecoder();
    a.decoder.decode(tmpl(1), EXP, NOW);
    a.decoder.decode(
      ipfixMessage({ domain: 1, exportSecs: SECS }, [
        optionsTemplateSet(
          10,
          300,
          [{ id: 149, length: 4 }],
          [
            { id: 305, length: 4 },
            { id: 306, length: 4 },
            { id: 9999, length: 2, enterprise: 32473 },
          ],
        ),
      ]),
      EXP,
      NOW,
    );
    const json = JSON.stringify(a.templates.export());
    const restored = new TemplateCache();
    expect(restored.import(JSON.parse(json))).toBe(2);
    expect(JSON.stringify(restored.export())).toBe(json);
    expect(restored.exportOne({ exporter: EXP, version: 10, domain: 1, id: 300 })).toMatchObject({ options: true, scope: 1 });
    const b = new FlowDecoder({ templates: restored });
    const r = b.decode(data(1), EXP, NOW + 60_000);
    expect(r).toMatchObject({ malformed: false, pending: 0 });
    expect(r.records).toHaveLength(1);
    // Invalid entries are skipped, not trusted.
    expect(restored.import([null, { exporter: EXP, version: 10, domain: 1, id: 12, options: false, scope: 0, fields: [], seen_ms: 0 }, "x"])).toBe(0);
  });

  it("IPFIX withdrawal removes one template, or all data templates of the domain (options templates stay)", () => {
    const { decoder, templates } = newDecoder();
    decoder.decode(
      ipfixMessage({ domain: 1, exportSecs: SECS }, [
        templateSet(10, [
          { id: 256, fields: T256 },
          { id: 257, fields: T256 },
          { id: 258, fields: T256 },
        ]),
        optionsTemplateSet(10, 400, [{ id: 149, length: 4 }], [{ id: 34, length: 4 }]),
      ]),
      EXP,
      NOW,
    );
    expect(templates.size).toBe(4);
    const w = decoder.decode(ipfixMessage({ domain: 1, exportSecs: SECS }, [templateSet(10, [{ id: 256, fields: [] }])]), EXP, NOW);
    expect(w).toMatchObject({ malformed: false, templatesWithdrawn: [{ exporter: EXP, version: 10, domain: 1, id: 256 }] });
    // Data for a withdrawn template waits for a new one.
    expect(decoder.decode(data(1), EXP, NOW)).toMatchObject({ records: [], pending: 1 });
    const all = decoder.decode(ipfixMessage({ domain: 1, exportSecs: SECS }, [templateSet(10, [{ id: 2, fields: [] }])]), EXP, NOW);
    expect(all.templatesWithdrawn.map((k) => k.id).sort()).toEqual([257, 258]);
    expect(templates.export().map((t) => t.id)).toEqual([400]);
    // Options set 3 with template id 3 and field count 0: withdraw all options templates.
    const opts = decoder.decode(ipfixMessage({ domain: 1, exportSecs: SECS }, [Buffer.concat([u(2, 3), u(2, 8), u(2, 3), u(2, 0)])]), EXP, NOW);
    expect(opts.templatesWithdrawn.map((k) => k.id)).toEqual([400]);
    expect(templates.size).toBe(0);
  });

  it("holds data that comes before its template and decodes it when the template arrives", () => {
    const { decoder } = newDecoder();
    const early = decoder.decode(data(1, rec256("192.0.2.1", "192.0.2.2", 6, 1, 2, 100, 1), rec256("192.0.2.3", "192.0.2.4", 17, 3, 4, 200, 2)), EXP, NOW);
    expect(early).toMatchObject({ records: [], pending: 1, malformed: false });
    expect(decoder.stats().pendingNow).toBe(1);
    const t = decoder.decode(tmpl(1), EXP, NOW + 1000);
    expect(t.records.map((r) => [r.src, r.bytes])).toEqual([
      ["192.0.2.1", 100],
      ["192.0.2.3", 200],
    ]);
    expect(decoder.stats()).toMatchObject({ pendingHeld: 1, pendingDecoded: 1, pendingDropped: 0, pendingNow: 0 });
  });

  it("hands records to a sink instead of the result: the same records, held sets included, one scratch object", () => {
    const early = data(1, rec256("192.0.2.1", "192.0.2.2", 6, 1, 2, 100, 1), rec256("192.0.2.3", "192.0.2.4", 17, 3, 4, 200, 2));
    const later = data(1, rec256("2.2.2.2", "3.3.3.3", 1, 0, 2048, 64, 1));
    const copies = newDecoder().decoder;
    const expected = [copies.decode(early, EXP, NOW), copies.decode(tmpl(1), EXP, NOW + 1000), copies.decode(later, EXP, NOW + 2000)].flatMap((r) => r.records);
    expect(expected).toHaveLength(3);

    const { decoder } = newDecoder();
    const seen: unknown[] = [];
    const objects = new Set<object>();
    const sink = (r: FlowRecord, src4: number, dst4: number): void => {
      objects.add(r);
      // IPv4 addresses come as numbers only.
      expect([r.src, r.dst]).toEqual(["", ""]);
      seen.push(copyRecord(r, src4, dst4));
    };
    const results = [decoder.decode(early, EXP, NOW, sink), decoder.decode(tmpl(1), EXP, NOW + 1000, sink), decoder.decode(later, EXP, NOW + 2000, sink)];
    expect(seen).toEqual(expected);
    expect(results.map((r) => r.records)).toEqual([[], [], []]);
    expect(objects.size).toBe(1);
    expect(decoder.stats()).toMatchObject({ records: 3, pendingDecoded: 1 });
  });

  it("drops held data older than pendingMaxMs and beyond pendingMaxSets, and counts it", () => {
    const { decoder } = newDecoder({ pendingMaxMs: 5000, pendingMaxSets: 2 });
    decoder.decode(data(1), EXP, NOW);
    expect(decoder.expire(NOW + 4000)).toBe(0);
    expect(decoder.expire(NOW + 5001)).toBe(1);
    expect(decoder.decode(tmpl(1), EXP, NOW + 6000).records).toEqual([]);
    // The bound: three sets for unknown templates, the oldest is dropped.
    const other = (id: number): Buffer => ipfixMessage({ domain: 7, exportSecs: SECS }, [dataSet(id, [Buffer.alloc(8)])]);
    decoder.decode(other(300), EXP, NOW);
    decoder.decode(other(301), EXP, NOW);
    expect(decoder.decode(other(302), EXP, NOW).dropped).toBe(1);
    // Expiry also happens as a side effect of decode().
    expect(decoder.decode(other(303), EXP, NOW + 10_000).dropped).toBe(2);
    expect(decoder.stats()).toMatchObject({ pendingDropped: 4, pendingNow: 1 });
  });

  it("bounds the cache (the template learned longest ago is evicted) and counts templates per exporter", () => {
    const templates = new TemplateCache({ maxTemplates: 3 });
    const decoder = new FlowDecoder({ templates });
    for (let id = 256; id < 261; id++) decoder.decode(ipfixMessage({ domain: 1, exportSecs: SECS }, [templateSet(10, [{ id, fields: T256 }])]), EXP, NOW + id);
    expect(templates.size).toBe(3);
    expect(templates.evicted).toBe(2);
    expect(templates.export().map((t) => t.id)).toEqual([258, 259, 260]);
    expect(templates.counts()).toEqual({ [EXP]: 3 });
    expect(templates.forgetExporter(EXP)).toBe(3);
    expect(templates.counts()).toEqual({});
  });
});

describe("encodings", () => {
  it("skips enterprise fields by their length and reads variable-length fields (short and 255+ forms)", () => {
    const fields: FieldSpec[] = [
      { id: 8, length: 4 },
      { id: 100, length: 6, enterprise: 9 },
      { id: 82, length: 65535 },
      { id: 12, length: 4 },
      { id: 200, length: 65535, enterprise: 29305 },
      { id: 1, length: 4 },
      { id: 2, length: 4 },
    ];
    const rec = (name: string, blob: number, bytes: number): Buffer =>
      Buffer.concat([
        ip4("192.0.2.1"),
        Buffer.alloc(6, 0xee),
        varlen(Buffer.from(name)),
        ip4("203.0.113.7"),
        varlen(Buffer.alloc(blob, 0xab)),
        u(4, bytes),
        u(4, 1),
      ]);
    const { decoder } = newDecoder();
    const r = decoder.decode(
      ipfixMessage({ domain: 0, exportSecs: SECS }, [
        templateSet(10, [{ id: 999, fields }]),
        dataSet(999, [rec("eth0", 3, 100), rec("", 300, 200), rec("x".repeat(254), 255, 300)]),
      ]),
      EXP,
      NOW,
    );
    expect(r.malformed).toBe(false);
    expect(r.records.map((x) => [x.src, x.dst, x.bytes])).toEqual([
      ["192.0.2.1", "203.0.113.7", 100],
      ["192.0.2.1", "203.0.113.7", 200],
      ["192.0.2.1", "203.0.113.7", 300],
    ]);
    // A variable-length field running past its set is malformed; records before it are kept.
    const bad = Buffer.concat([rec("eth0", 3, 1), ip4("192.0.2.1"), Buffer.alloc(6), u(1, 200), Buffer.alloc(30)]);
    const m = decoder.decode(ipfixMessage({ domain: 0, exportSecs: SECS }, [dataSet(999, [bad])]), EXP, NOW);
    expect(m.malformed).toBe(true);
    expect(m.records).toHaveLength(1);
  });

  it("reads counters of any width; 64-bit values beyond 2^53 are clamped", () => {
    const fields: FieldSpec[] = [
      { id: 8, length: 4 },
      { id: 12, length: 4 },
      { id: 1, length: 8 },
      { id: 2, length: 3 },
      { id: 10, length: 2 },
      { id: 14, length: 4 },
      { id: 16, length: 4 },
      { id: 17, length: 2 },
      { id: 6, length: 2 },
    ];
    const rec = (bytes: bigint, packets: number): Buffer =>
      Buffer.concat([ip4("192.0.2.1"), ip4("192.0.2.2"), u(8, bytes), u(3, packets), u(2, 7), u(4, 70000), u(4, 4200000000), u(2, 64500), u(2, 0x1b)]);
    const { decoder } = newDecoder();
    const r = decoder.decode(
      ipfixMessage({ domain: 0, exportSecs: SECS }, [templateSet(10, [{ id: 500, fields }]), dataSet(500, [rec(2n ** 40n + 5n, 0xabcdef), rec(2n ** 60n, 1)])]),
      EXP,
      NOW,
    );
    expect(r.records[0]).toMatchObject({ bytes: 2 ** 40 + 5, packets: 0xabcdef, in_if: 7, out_if: 70000, src_as: 4200000000, dst_as: 64500, tcp_flags: 0x1b });
    expect(r.records[1].bytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("computes first/last from every time encoding", () => {
    const { decoder } = newDecoder();
    const base: FieldSpec[] = [
      { id: 8, length: 4 },
      { id: 12, length: 4 },
    ];
    const addr = Buffer.concat([ip4("192.0.2.1"), ip4("192.0.2.2")]);
    const ntp = (ms: number): Buffer => Buffer.concat([u(4, Math.floor(ms / 1000) + 2208988800), u(4, Math.round(((ms % 1000) / 1000) * 2 ** 32))]);
    const cases: [FieldSpec[], Buffer, number, number][] = [
      [
        [
          { id: 150, length: 4 },
          { id: 151, length: 4 },
        ],
        Buffer.concat([u(4, SECS - 10), u(4, SECS - 2)]),
        NOW - 10_000,
        NOW - 2000,
      ],
      [
        [
          { id: 152, length: 8 },
          { id: 153, length: 8 },
        ],
        Buffer.concat([u(8, NOW - 1234), u(8, NOW - 5)]),
        NOW - 1234,
        NOW - 5,
      ],
      [
        [
          { id: 156, length: 8 },
          { id: 157, length: 8 },
        ],
        Buffer.concat([ntp(NOW - 2500), ntp(NOW - 500)]),
        NOW - 2500,
        NOW - 500,
      ],
      [
        [
          { id: 158, length: 4 },
          { id: 159, length: 4 },
        ],
        Buffer.concat([u(4, 3_000_000), u(4, 1_000_000)]),
        NOW - 3000,
        NOW - 1000,
      ],
      // sysUpTime-relative with systemInitTimeMilliseconds in the record.
      [
        [
          { id: 160, length: 8 },
          { id: 22, length: 4 },
          { id: 21, length: 4 },
        ],
        Buffer.concat([u(8, NOW - 100_000), u(4, 90_000), u(4, 95_000)]),
        NOW - 10_000,
        NOW - 5000,
      ],
    ];
    let id = 600;
    for (const [fields, values, first, last] of cases) {
      const r = decoder.decode(
        ipfixMessage({ domain: 0, exportSecs: SECS }, [templateSet(10, [{ id, fields: [...base, ...fields] }]), dataSet(id, [Buffer.concat([addr, values])])]),
        EXP,
        NOW,
      );
      expect([r.records[0].first_ms, r.records[0].last_ms]).toEqual([first, last]);
      id++;
    }
    // 21/22 without 160 in the record: the init time from an options record of the same domain, else null.
    const up: FieldSpec[] = [...base, { id: 22, length: 4 }, { id: 21, length: 4 }];
    const upRec = Buffer.concat([addr, u(4, 1000), u(4, 2000)]);
    const before = decoder.decode(ipfixMessage({ domain: 5, exportSecs: SECS }, [templateSet(10, [{ id: 700, fields: up }]), dataSet(700, [upRec])]), EXP, NOW);
    expect(before.records[0].first_ms).toBeNull();
    const withInit = decoder.decode(
      ipfixMessage({ domain: 5, exportSecs: SECS }, [
        optionsTemplateSet(10, 701, [{ id: 149, length: 4 }], [{ id: 160, length: 8 }]),
        dataSet(701, [Buffer.concat([u(4, 5), u(8, NOW - 60_000)])]),
        dataSet(700, [upRec]),
      ]),
      EXP,
      NOW,
    );
    expect([withInit.records[0].first_ms, withInit.records[0].last_ms]).toEqual([NOW - 59_000, NOW - 58_000]);
    // v9: FIRST/LAST_SWITCHED against the header's sysUpTime and export seconds.
    const v9 = decoder.decode(
      v9Packet({ sourceId: 3, uptimeMs: 600_000, unixSecs: SECS }, [
        templateSet(9, [{ id: 256, fields: up }]),
        dataSet(256, [Buffer.concat([addr, u(4, 590_000), u(4, 599_000)])]),
      ]),
      EXP,
      NOW,
    );
    expect([v9.records[0].first_ms, v9.records[0].last_ms]).toEqual([NOW - 10_000, NOW - 1000]);
  });

  it("v9: 4- and 8-byte counters, OUT_BYTES/OUT_PKTS, IPv6, options template flowset and padding", () => {
    const fields: FieldSpec[] = [
      { id: 27, length: 16 },
      { id: 28, length: 16 },
      { id: 4, length: 1 },
      { id: 7, length: 2 },
      { id: 11, length: 2 },
      { id: 23, length: 8 },
      { id: 24, length: 4 },
      { id: 10, length: 4 },
      { id: 14, length: 4 },
    ];
    const rec = Buffer.concat([ip6("2001:db8::a"), ip6("2001:db8:0:0:1::1"), u(1, 6), u(2, 443), u(2, 50000), u(8, 2n ** 33n), u(4, 9), u(4, 1), u(4, 2)]);
    const { decoder } = newDecoder();
    const r = decoder.decode(
      v9Packet({ sourceId: 77, uptimeMs: 10_000, unixSecs: SECS }, [
        templateSet(9, [{ id: 260, fields }]),
        optionsTemplateSet(9, 261, [{ id: 1, length: 4 }], [{ id: 34, length: 4 }]),
        dataSet(260, [rec, rec]),
      ]),
      EXP,
      NOW,
    );
    expect(r.malformed).toBe(false);
    expect(r.records).toHaveLength(2);
    expect(r.records[0]).toMatchObject({
      version: 9,
      domain: 77,
      src: "2001:db8::a",
      dst: "2001:db8::1:0:0:1",
      bytes: 2 ** 33,
      packets: 9,
      in_if: 1,
      out_if: 2,
    });
  });
});

describe("sampling", () => {
  it("IPFIX: samplingPacketInterval/Space from an options record, per (exporter, domain); an override wins", () => {
    let override: number | null = null;
    const { decoder } = newDecoder({ samplingOverride: (e) => (e === EXP ? override : null) });
    decoder.decode(tmpl(1), EXP, NOW);
    decoder.decode(tmpl(2), EXP, NOW);
    decoder.decode(
      ipfixMessage({ domain: 1, exportSecs: SECS }, [
        optionsTemplateSet(
          10,
          310,
          [{ id: 149, length: 4 }],
          [
            { id: 305, length: 4 },
            { id: 306, length: 4 },
          ],
        ),
        dataSet(310, [Buffer.concat([u(4, 1), u(4, 1), u(4, 99)])]),
      ]),
      EXP,
      NOW,
    );
    expect(decoder.reportedSampling(EXP, 1)).toBe(100);
    expect(decoder.decode(data(1), EXP, NOW).records[0]).toMatchObject({ sampling: 100, bytes: 150000, packets: 300, raw_bytes: 1500, raw_packets: 3 });
    expect(decoder.decode(data(2), EXP, NOW).records[0]).toMatchObject({ sampling: 1, bytes: 1500 });
    override = 10;
    expect(decoder.decode(data(1), EXP, NOW).records[0]).toMatchObject({ sampling: 10, bytes: 15000, packets: 30 });
    // samplingInterval (34) replaces the rate.
    decoder.decode(
      ipfixMessage({ domain: 2, exportSecs: SECS }, [
        optionsTemplateSet(10, 311, [{ id: 149, length: 4 }], [{ id: 34, length: 4 }]),
        dataSet(311, [Buffer.concat([u(4, 2), u(4, 512)])]),
      ]),
      EXP,
      NOW,
    );
    override = null;
    expect(decoder.decode(data(2), EXP, NOW).records[0].sampling).toBe(512);
  });

  it("v9: FLOW_SAMPLER_ID (48) in data records picks the FLOW_SAMPLER_RANDOM_INTERVAL (50) of that sampler", () => {
    const { decoder } = newDecoder();
    const fields: FieldSpec[] = [
      { id: 8, length: 4 },
      { id: 12, length: 4 },
      { id: 1, length: 4 },
      { id: 2, length: 4 },
      { id: 48, length: 1 },
    ];
    const rec = (sampler: number): Buffer => Buffer.concat([ip4("192.0.2.1"), ip4("192.0.2.2"), u(4, 1000), u(4, 2), u(1, sampler)]);
    const hdr = { sourceId: 9, uptimeMs: 1000, unixSecs: SECS };
    const r = decoder.decode(
      v9Packet(hdr, [
        templateSet(9, [{ id: 256, fields }]),
        optionsTemplateSet(
          9,
          257,
          [{ id: 1, length: 4 }],
          [
            { id: 48, length: 1 },
            { id: 49, length: 1 },
            { id: 50, length: 4 },
          ],
        ),
        dataSet(257, [Buffer.concat([u(4, 0), u(1, 1), u(1, 2), u(4, 100)]), Buffer.concat([u(4, 0), u(1, 2), u(1, 2), u(4, 1000)])]),
        dataSet(256, [rec(1), rec(2), rec(3)]),
      ]),
      EXP,
      NOW,
    );
    expect(r.malformed).toBe(false);
    expect(r.records.map((x) => [x.sampling, x.packets, x.bytes])).toEqual([
      [100, 200, 100_000],
      [1000, 2000, 1_000_000],
      [1, 2, 1000],
    ]);
  });

  it("v5: the header's sampling interval (low 14 bits; the top 2 are the mode)", () => {
    const { decoder } = newDecoder();
    const hdr = Buffer.concat([u(2, 5), u(2, 1), u(4, 100_000), u(4, SECS), u(4, 0), u(4, 1), u(1, 0), u(1, 0), u(2, (1 << 14) | 64)]);
    const rec = Buffer.concat([
      ip4("192.0.2.1"),
      ip4("192.0.2.2"),
      ip4("0.0.0.0"),
      u(2, 3),
      u(2, 4),
      u(4, 5),
      u(4, 500),
      u(4, 90_000),
      u(4, 99_000),
      u(2, 1),
      u(2, 2),
      u(1, 0),
      u(1, 2),
      u(1, 6),
      u(1, 0),
      u(2, 65000),
      u(2, 65001),
      u(4, 0),
    ]);
    const r = decoder.decode(Buffer.concat([hdr, rec]), EXP, NOW);
    expect(r.malformed).toBe(false);
    expect(r.records[0]).toMatchObject({
      version: 5,
      sampling: 64,
      packets: 320,
      bytes: 32000,
      raw_packets: 5,
      in_if: 3,
      out_if: 4,
      src_as: 65000,
      dst_as: 65001,
      tcp_flags: 2,
    });
    expect([r.records[0].first_ms, r.records[0].last_ms]).toEqual([NOW - 10_000, NOW - 1000]);
  });
});

describe("addresses", () => {
  it.each([
    ["2001:db8::1", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["2001:0:0:1::1", "2001:0:0:1::1"],
    ["::", "::"],
    ["::1", "::1"],
    ["::ffff:c000:201", "::ffff:192.0.2.1"],
    ["2001:DB8:AAAA::", "2001:db8:aaaa::"],
  ])("IPv6 %s is printed as %s (RFC 5952)", (input, text) => {
    const { decoder } = newDecoder();
    const fields: FieldSpec[] = [
      { id: 27, length: 16 },
      { id: 28, length: 16 },
    ];
    const r = decoder.decode(
      ipfixMessage({ domain: 0, exportSecs: SECS }, [templateSet(10, [{ id: 256, fields }]), dataSet(256, [Buffer.concat([ip6(input), ip6("2001:db8::2")])])]),
      EXP,
      NOW,
    );
    expect(r.records[0].src).toBe(text);
  });
});
