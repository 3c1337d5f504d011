import { createSocket, type Socket } from "node:dgram";
import { DnsProbe, runDnsCheck } from "../checks/DnsProbe.js";
import type { CheckMetric } from "../checks/UrlProbe.js";
import type { DnsCheckSpec } from "../poller/types.js";

/**
 * A minimal authoritative DNS responder on 127.0.0.1 (node:dgram): A, AAAA, CNAME and TXT from
 * a table, NXDOMAIN for unknown names, NODATA for a known name without the type, and silence
 * for names listed in `drop`. A CNAME is answered alone (no chasing on the server side), so the
 * probe's own CNAME following is what reaches the address.
 */
interface ZoneEntry {
  A?: string[];
  AAAA?: string[];
  CNAME?: string;
  TXT?: string[];
  PTR?: string;
}

const TYPES = { A: 1, CNAME: 5, PTR: 12, TXT: 16, AAAA: 28 } as const;

function encodeName(name: string): Buffer {
  const parts = name
    .replace(/\.$/, "")
    .split(".")
    .filter(Boolean)
    .map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, "ascii")]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

function ipv6Bytes(addr: string): Buffer {
  const [head, tail] = addr.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

function record(name: string, type: number, rdata: Buffer): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(1, 2); // IN
  fixed.writeUInt32BE(60, 4); // TTL
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([encodeName(name), fixed, rdata]);
}

interface DnsResponder {
  port: number;
  queries: { name: string; type: number }[];
  close(): Promise<void>;
}

async function startDnsResponder(zone: Record<string, ZoneEntry>, drop: Set<string>): Promise<DnsResponder> {
  const socket: Socket = createSocket("udp4");
  const queries: { name: string; type: number }[] = [];
  socket.on("message", (msg, rinfo) => {
    // header (12 bytes), then QNAME labels, QTYPE, QCLASS; an EDNS OPT record after it is ignored
    let off = 12;
    const labels: string[] = [];
    while (msg[off] !== 0) {
      labels.push(msg.subarray(off + 1, off + 1 + msg[off]).toString("ascii"));
      off += msg[off] + 1;
    }
    const question = msg.subarray(12, off + 5);
    const qtype = msg.readUInt16BE(off + 1);
    const name = labels.join(".").toLowerCase();
    queries.push({ name, type: qtype });
    if (drop.has(name)) return;

    const entry = zone[name];
    const answers: Buffer[] = [];
    if (entry) {
      if (entry.CNAME && qtype !== TYPES.CNAME) answers.push(record(name, TYPES.CNAME, encodeName(entry.CNAME)));
      else if (qtype === TYPES.CNAME && entry.CNAME) answers.push(record(name, TYPES.CNAME, encodeName(entry.CNAME)));
      else if (qtype === TYPES.A) for (const a of entry.A ?? []) answers.push(record(name, TYPES.A, Buffer.from(a.split(".").map(Number))));
      else if (qtype === TYPES.AAAA) for (const a of entry.AAAA ?? []) answers.push(record(name, TYPES.AAAA, ipv6Bytes(a)));
      else if (qtype === TYPES.PTR && entry.PTR) answers.push(record(name, TYPES.PTR, encodeName(entry.PTR)));
      else if (qtype === TYPES.TXT) {
        for (const t of entry.TXT ?? []) answers.push(record(name, TYPES.TXT, Buffer.concat([Buffer.from([t.length]), Buffer.from(t)])));
      }
    }
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // id
    const rd = msg.readUInt16BE(2) & 0x0100;
    header.writeUInt16BE(0x8000 | 0x0400 | rd | (entry ? 0 : 3), 2); // QR, AA, RD echoed, NOERROR or NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return {
    port: socket.address().port,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

const ZONE: Record<string, ZoneEntry> = {
  "host.test": { A: ["192.0.2.10", "192.0.2.11"], AAAA: ["2001:db8::10"] },
  "alias1.test": { CNAME: "alias2.test" },
  "alias2.test": { CNAME: "host.test" },
  "txt.test": { TXT: ["v=spf1 -all", "hello"] },
  "10.2.0.192.in-addr.arpa": { PTR: "host.test" },
};

let dns: DnsResponder;
let silent: DnsResponder;
beforeAll(async () => {
  dns = await startDnsResponder(ZONE, new Set(["slow.test"]));
  silent = await startDnsResponder({}, new Set());
});
afterAll(async () => {
  await dns?.close();
  await silent?.close();
});

function spec(name: string, over: Partial<DnsCheckSpec> = {}): DnsCheckSpec {
  return { name, record_type: "A", resolver_ip: "127.0.0.1", resolver_port: dns.port, timeout_ms: 2000, max_depth: 3, ...over };
}

const asMap = (metrics: CheckMetric[]) => Object.fromEntries(metrics.map((m) => [m.metric, m.value]));

describe("record types", () => {
  it("A at the configured resolver and port: up with the answer count and the time", async () => {
    const r = await runDnsCheck(spec("host.test"));
    expect(r.reason).toBeNull();
    const m = asMap(r.metrics);
    expect(m).toMatchObject({ dns_up: 1, dns_answers: 2 });
    expect(m.dns_response_ms).toBeGreaterThanOrEqual(0);
    expect(dns.queries.some((q) => q.name === "host.test" && q.type === TYPES.A)).toBe(true);
  });

  it("AAAA", async () => {
    expect(asMap((await runDnsCheck(spec("host.test", { record_type: "AAAA" }))).metrics)).toMatchObject({ dns_up: 1, dns_answers: 1 });
  });

  it("CNAME answers the alias record itself, without following it", async () => {
    const r = await runDnsCheck(spec("alias1.test", { record_type: "CNAME" }));
    expect(asMap(r.metrics)).toMatchObject({ dns_up: 1, dns_answers: 1 });
    expect(r.answered_name).toBe("alias1.test");
  });

  it("TXT", async () => {
    expect(asMap((await runDnsCheck(spec("txt.test", { record_type: "TXT" }))).metrics)).toMatchObject({ dns_up: 1, dns_answers: 2 });
  });

  it("PTR of an IP address queries its reverse name", async () => {
    const r = await runDnsCheck(spec("192.0.2.10", { record_type: "PTR" }));
    expect(asMap(r.metrics)).toMatchObject({ dns_up: 1, dns_answers: 1 });
    expect(dns.queries.some((q) => q.name === "10.2.0.192.in-addr.arpa" && q.type === TYPES.PTR)).toBe(true);
  });

  it("a type the check does not know is down without a query", async () => {
    const r = await runDnsCheck(spec("host.test", { record_type: "HINFO" }));
    expect(asMap(r.metrics)).toEqual({ dns_up: 0, dns_answers: 0 });
    expect(r.reason).toBe("unsupported record type HINFO");
  });
});

describe("CNAME chasing", () => {
  it("follows a chain within max_depth to the records of the type", async () => {
    const r = await runDnsCheck(spec("alias1.test", { max_depth: 2 }));
    expect(asMap(r.metrics)).toMatchObject({ dns_up: 1, dns_answers: 2 });
    expect(r.answered_name).toBe("host.test");
  });

  it("a chain longer than max_depth is down", async () => {
    const r = await runDnsCheck(spec("alias1.test", { max_depth: 1 }));
    expect(asMap(r.metrics)).toMatchObject({ dns_up: 0, dns_answers: 0 });
    expect(r.reason).toBe("CNAME chain longer than max_depth 1");
    const none = await runDnsCheck(spec("alias1.test", { max_depth: 0 }));
    expect(none.reason).toBe("CNAME chain longer than max_depth 0");
  });
});

describe("failures", () => {
  it("NXDOMAIN: down, but the server answered, so the time is kept", async () => {
    const r = await runDnsCheck(spec("nothing.test"));
    expect(r.reason).toBe("no such name (NXDOMAIN)");
    const m = asMap(r.metrics);
    expect(m).toMatchObject({ dns_up: 0, dns_answers: 0 });
    expect(m).toHaveProperty("dns_response_ms");
  });

  it("NODATA: the name exists without that type", async () => {
    const r = await runDnsCheck(spec("txt.test", { record_type: "AAAA" }));
    expect(r.reason).toBe("no record of that type");
    expect(asMap(r.metrics)).toMatchObject({ dns_up: 0, dns_answers: 0 });
  });

  it("timeout_ms bounds a silent server: down, no response time", async () => {
    const started = Date.now();
    const r = await runDnsCheck(spec("slow.test", { timeout_ms: 300 }));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(r.reason).toBe("timeout");
    expect(asMap(r.metrics)).toEqual({ dns_up: 0, dns_answers: 0 });
  });

  it("a resolver that answers nothing for the zone counts as NXDOMAIN there", async () => {
    const r = await runDnsCheck(spec("host.test", { resolver_port: silent.port }));
    expect(asMap(r.metrics)).toMatchObject({ dns_up: 0 });
    expect(r.reason).toBe("no such name (NXDOMAIN)");
  });

  it("DnsProbe.run answers the metrics and reports why it was down", async () => {
    const downs: string[] = [];
    const probe = new DnsProbe((reason, name, type) => downs.push(`${name}/${type}: ${reason}`));
    expect(asMap(await probe.run(spec("host.test")))).toMatchObject({ dns_up: 1 });
    expect(asMap(await probe.run(spec("nothing.test")))).toMatchObject({ dns_up: 0 });
    expect(downs).toEqual(["nothing.test/A: no such name (NXDOMAIN)"]);
  });
});
