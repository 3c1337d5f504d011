/** The tee's pure parts: the token bucket, RFC 5424 rendering and framing, template detection, varbind re-typing. */
import snmp from "net-snmp";
import type { Inbound } from "../../events/contract.js";
import { carriesTemplates } from "../lib/flowSets.js";
import { octetCounted, renderRfc5424, syslogPayload } from "../lib/render.js";
import type { RuntimeDestination } from "../lib/types.js";
import { TokenBucket } from "../services/ForwardingTee.js";
import { onFastPath } from "../services/Tee.js";
import { toSnmpVarbind } from "../senders/trapSender.js";
import { dataSet, ipfixMessage, templateSet, u, v9Packet } from "../../../test/support/flowPeers.js";

const syslog = (over: Partial<NonNullable<Inbound["syslog"]>> = {}, raw: Partial<Inbound> = {}): Inbound => ({
  kind: "syslog",
  transport: "udp",
  listener: "syslog.udp",
  source_ip: "192.0.2.7",
  received_at_ms: Date.UTC(2026, 10, 24, 9, 0, 0),
  syslog: {
    format: "rfc5424",
    facility: 4,
    severity: 2,
    timestamp: "2026-11-24T08:59:59.250Z",
    hostname: "core sw 1",
    app_name: "sshd",
    procid: null,
    msgid: null,
    structured_data: [{ id: "a@1", params: [["k", 'q"b\\c]d']] }],
    message: "hello",
    cisco: null,
    ...over,
  },
  trap: null,
  raw: null,
  malformed: false,
  ...raw,
});

describe("TokenBucket", () => {
  it("allows one second's worth at once, then refills at the rate", () => {
    // Whole milliseconds, so the refill arithmetic is exact (a fractional performance.now() left 9.999… tokens).
    const t0 = 1_000_000;
    const b = new TokenBucket(10, t0);
    let passed = 0;
    for (let i = 0; i < 50; i++) if (b.take(t0)) passed++;
    expect(passed).toBe(10);
    expect(b.take(t0 + 50)).toBe(false);
    expect(b.take(t0 + 100)).toBe(true);
    let later = 0;
    for (let i = 0; i < 50; i++) if (b.take(t0 + 1100)) later++;
    expect(later).toBe(10);
  });
});

describe("renderRfc5424", () => {
  it("builds the header from the parsed fields, escaping SD values and replacing spaces in header fields", () => {
    expect(renderRfc5424(syslog())).toBe('<34>1 2026-11-24T08:59:59.250Z core_sw_1 sshd - - [a@1 k="q\\"b\\\\c\\]d"] hello');
  });
  it("falls back to the receive time, the source address, user.notice, and raw text for what did not parse", () => {
    const r = syslog({}, { syslog: null, raw: "garbage <>", malformed: true });
    expect(renderRfc5424(r)).toBe("<13>1 2026-11-24T09:00:00.000Z 192.0.2.7 - - - - garbage <>");
  });
  it("verbatim uses the bytes when known, and octet counting prefixes the byte length", () => {
    const bytes = Buffer.from("<13>original ü");
    expect(syslogPayload(syslog({}, { bytes }), true)).toBe(bytes);
    expect(syslogPayload(syslog(), true).toString()).toContain("hello");
    expect(octetCounted(bytes).toString()).toBe(`${bytes.length} <13>original ü`);
  });
});

describe("carriesTemplates", () => {
  const tpl = (v: 9 | 10) => templateSet(v, [{ id: 256, fields: [{ id: 8, length: 4 }] }]);
  const data = dataSet(256, [u(4, 0x0a000001)]);
  it("finds v9 and IPFIX template sets, and not data-only datagrams or v5", () => {
    expect(carriesTemplates(v9Packet({ sourceId: 1, uptimeMs: 0, unixSecs: 0 }, [tpl(9), data]))).toBe(true);
    expect(carriesTemplates(v9Packet({ sourceId: 1, uptimeMs: 0, unixSecs: 0 }, [data]))).toBe(false);
    expect(carriesTemplates(ipfixMessage({ domain: 1, exportSecs: 0 }, [data, tpl(10)]))).toBe(true);
    expect(carriesTemplates(ipfixMessage({ domain: 1, exportSecs: 0 }, [data]))).toBe(false);
    expect(carriesTemplates(Buffer.from([0, 5, 0, 1]))).toBe(false);
    expect(carriesTemplates(Buffer.from([0, 9]))).toBe(false);
  });
});

describe("toSnmpVarbind", () => {
  it("gives each text-friendly varbind its SNMP type back", () => {
    const T = snmp.ObjectType;
    expect(toSnmpVarbind({ oid: "1.2", type: "Integer", value: -5 })).toEqual({ oid: "1.2", type: T.Integer, value: -5 });
    expect(toSnmpVarbind({ oid: "1.2", type: "OctetString", value: "0x00ff" })).toEqual({ oid: "1.2", type: T.OctetString, value: Buffer.from([0, 255]) });
    expect(toSnmpVarbind({ oid: "1.2", type: "OctetString", value: "text" })).toEqual({ oid: "1.2", type: T.OctetString, value: "text" });
    expect(toSnmpVarbind({ oid: "1.2", type: "Counter64", value: "18446744073709551615" })?.value).toEqual(Buffer.alloc(8, 255));
    expect(toSnmpVarbind({ oid: "1.2", type: "IpAddress", value: "10.0.0.1" })).toEqual({ oid: "1.2", type: T.IpAddress, value: "10.0.0.1" });
    expect(toSnmpVarbind({ oid: "1.2", type: "IpAddress", value: "::1" })).toBeNull();
    expect(toSnmpVarbind({ oid: "1.2", type: "NoSuchObject", value: null })).toBeNull();
  });
});

describe("onFastPath", () => {
  const base: RuntimeDestination = {
    id: "d",
    name: "d",
    dest_kind: "syslog_udp",
    source_kind: "syslog",
    host: "127.0.0.1",
    port: 514,
    pool: null,
    rate_limit_per_sec: null,
    verbatim: true,
    ca_cert: null,
    community: null,
    service_account_json: null,
    filter: () => true,
    unfiltered: true,
    version: "v",
  };
  it("takes verbatim, unfiltered, unlimited syslog_udp relays to an address, and nothing else", () => {
    expect(onFastPath(base)).toBe(true);
    expect(onFastPath({ ...base, host: "[::1]" })).toBe(true);
    expect(onFastPath({ ...base, host: "collector.example.net" })).toBe(false);
    expect(onFastPath({ ...base, verbatim: false })).toBe(false);
    expect(onFastPath({ ...base, unfiltered: false })).toBe(false);
    expect(onFastPath({ ...base, rate_limit_per_sec: 10 })).toBe(false);
    expect(onFastPath({ ...base, dest_kind: "syslog_tcp" })).toBe(false);
    expect(onFastPath({ ...base, dest_kind: "snmp_trap_udp", source_kind: "trap" })).toBe(false);
  });
});
