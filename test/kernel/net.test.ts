import { isIP } from "node:net";
import { ADDRESS_BITS, formatIp, ipFamily, ipv4Number, isIpAddress, parseCidr, parseIp, prefixContains } from "../../core/index.js";
import { adminDatabaseUrl, rawQuery } from "../support/db.js";

describe("parseIp / isIpAddress", () => {
  it.each([
    ["10.0.0.1", 4, 0x0a000001n, "10.0.0.1", false],
    ["0.0.0.0", 4, 0n, "0.0.0.0", false],
    ["255.255.255.255", 4, 0xffffffffn, "255.255.255.255", false],
    ["::", 6, 0n, "::", false],
    ["::1", 6, 1n, "::1", false],
    ["2001:DB8:0:0:0:0:0:1", 6, 0x20010db8000000000000000000000001n, "2001:db8::1", false],
    ["2001:db8::", 6, 0x20010db8n << 96n, "2001:db8::", false],
    ["1:2:3:4:5:6:7:8", 6, 0x00010002000300040005000600070008n, "1:2:3:4:5:6:7:8", false],
    ["::ffff:192.0.2.1", 6, 0xffffc0000201n, "::ffff:c000:201", true],
    ["::ffff:c000:201", 6, 0xffffc0000201n, "::ffff:c000:201", true],
    // IPv4-compatible, not v4-mapped (RFC 4291 and PostgreSQL; ipaddr.js alone reads it as ::ffff:192.0.2.1)
    ["::192.0.2.1", 6, 0xc0000201n, "::c000:201", false],
    ["1:2:3:4:5:6:1.2.3.4", 6, 0x00010002000300040005000601020304n, "1:2:3:4:5:6:102:304", false],
  ])("reads %s", (text, family, value, canonical, v4Mapped) => {
    expect(parseIp(text)).toEqual({ family, value, text: canonical, v4Mapped });
    expect(isIpAddress(text)).toBe(true);
    expect(ipFamily(text)).toBe(family);
  });

  it.each([
    ["a leading zero", "010.0.0.1"],
    ["a leading zero in the last octet", "10.0.0.01"],
    ["three parts", "10.0.1"],
    ["one number", "167772161"],
    ["hex octets", "0x0a.0.0.1"],
    ["an octet above 255", "256.0.0.1"],
    ["five parts", "1.2.3.4.5"],
    ["a prefix", "10.0.0.0/24"],
    ["a zone id", "fe80::1%eth0"],
    ["a numeric zone id", "fe80::1%1"],
    ["two ::", "1::2::3"],
    ["nine groups", "1:2:3:4:5:6:7:8:9"],
    ["a five-digit group", "12345::"],
    ["a non-hex group", "2001:db8::g"],
    ["brackets", "[::1]"],
    ["a v4 tail with a leading zero", "::ffff:010.0.0.1"],
    ["a v4 tail of three parts", "::ffff:1.2.3"],
    ["a leading blank", " 10.0.0.1"],
    ["a trailing newline", "10.0.0.1\n"],
    ["a host name", "localhost"],
    ["an empty string", ""],
    ["non-ASCII digits", "١.٢.٣.٤"],
  ])("refuses %s (%j)", (_label, text) => {
    expect(parseIp(text)).toBeNull();
    expect(isIpAddress(text)).toBe(false);
    expect(ipFamily(text)).toBe(0);
  });

  it("refuses what is not a string", () => {
    for (const value of [undefined, null, 42, 0x0a000001n, {}, ["10.0.0.1"]]) {
      expect(parseIp(value)).toBeNull();
      expect(isIpAddress(value)).toBe(false);
      expect(ipFamily(value)).toBe(0);
    }
  });

  it("agrees with node:net isIP() on everything but zone ids", () => {
    const samples = [
      "1.2.3.4",
      "01.2.3.4",
      "::",
      "::ffff:1.2.3.4",
      "::ffff:01.2.3.4",
      "1:2:3:4:5:6:7::",
      "::2:3:4:5:6:7:8",
      "1:2:3:4:5:6:7:8::",
      "1:2:3:4:5::1.2.3.4",
      "1:2:3:4:5:6:7:1.2.3.4",
      ":1::",
      "1:::2",
      "0000:0000::",
      "ABCD::",
      "::ffff:0:1.2.3.4",
      "1..2.3",
    ];
    for (const text of samples) expect([text, ipFamily(text)]).toEqual([text, isIP(text)]);
  });
});

describe("ipv4Number", () => {
  it("reads the IPv4 addresses parseIp reads, as their unsigned 32 bits", () => {
    expect(ipv4Number("0.0.0.0")).toBe(0);
    expect(ipv4Number("255.255.255.255")).toBe(0xffffffff);
    expect(ipv4Number("10.0.0.1")).toBe(0x0a000001);
    expect(ipv4Number("198.51.100.7")).toBe(Number(parseIp("198.51.100.7")!.value));
  });

  it("answers -1 for everything else: IPv6, mapped, leading zeros, short or long, blanks", () => {
    for (const bad of [
      "",
      "1.2.3",
      "1.2.3.4.5",
      "256.0.0.1",
      "1..2.3",
      "1.2.3.",
      ".1.2.3",
      "::ffff:1.2.3.4",
      "2001:db8::1",
      "1.2.3.4 ",
      "010.0.0.1",
      "1234.1.1.1",
      "a.b.c.d",
    ]) {
      expect([bad, ipv4Number(bad)]).toEqual([bad, -1]);
      if (bad !== "::ffff:1.2.3.4" && bad !== "2001:db8::1") expect(isIpAddress(bad)).toBe(false);
    }
  });
});

describe("formatIp", () => {
  it("writes the dotted quad and RFC 5952 text", () => {
    expect(formatIp(4, 0x0a000001n)).toBe("10.0.0.1");
    expect(formatIp(4, 0n)).toBe("0.0.0.0");
    expect(formatIp(6, 1n)).toBe("::1");
    expect(formatIp(6, 0x20010db8000000000000000000000000n)).toBe("2001:db8::");
    expect(formatIp(6, 0x20010db8000000010000000000000001n)).toBe("2001:db8:0:1::1");
    expect(formatIp(6, (1n << 128n) - 1n)).toBe("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  });

  it("round-trips with parseIp", () => {
    for (const text of ["192.0.2.77", "2001:db8:85a3::8a2e:370:7334", "::ffff:a00:1", "fe80::1"]) {
      const ip = parseIp(text)!;
      expect(formatIp(ip.family, ip.value)).toBe(text);
    }
  });
});

describe("parseCidr", () => {
  it.each([
    ["10.1.2.0/24", 4, 24, 0x0a010200n, 256n, "10.1.2.0/24"],
    ["0.0.0.0/0", 4, 0, 0n, 1n << 32n, "0.0.0.0/0"],
    ["10.0.0.7/32", 4, 32, 0x0a000007n, 1n, "10.0.0.7/32"],
    ["10.0.0.7", 4, 32, 0x0a000007n, 1n, "10.0.0.7/32"],
    ["10.0.0.0/31", 4, 31, 0x0a000000n, 2n, "10.0.0.0/31"],
    ["2001:db8::/32", 6, 32, 0x20010db8n << 96n, 1n << 96n, "2001:db8::/32"],
    ["::/0", 6, 0, 0n, 1n << 128n, "::/0"],
    ["2001:db8::1", 6, 128, (0x20010db8n << 96n) | 1n, 1n, "2001:db8::1/128"],
    ["2001:db8::/126", 6, 126, 0x20010db8n << 96n, 4n, "2001:db8::/126"],
    ["::ffff:192.0.2.0/124", 6, 124, 0xffffc0000200n, 16n, "::ffff:c000:200/124"],
    ["::ffff:10.0.0.0/104", 6, 104, 0xffff0a000000n, 1n << 24n, "::ffff:a00:0/104"],
    [" 172.16.0.0/12 ", 4, 12, 0xac100000n, 1n << 20n, "172.16.0.0/12"],
    ["10.0.0.0/08", 4, 8, 0x0a000000n, 1n << 24n, "10.0.0.0/8"],
  ])("reads %j", (text, family, prefix, network, size, canonical) => {
    expect(parseCidr(text)).toEqual({ family, prefix, network, last: network + size - 1n, size, text: canonical });
  });

  it.each([
    ["10.1.2.3/24", "10.1.2.0/24"],
    ["10.255.255.255/8", "10.0.0.0/8"],
    ["192.168.7.9/0", "0.0.0.0/0"],
    ["10.0.0.1/31", "10.0.0.0/31"],
    ["2001:db8:abcd:12::5/64", "2001:db8:abcd:12::/64"],
    ["2001:db8::ffff/120", "2001:db8::ff00/120"],
    ["::ffff:192.0.2.9/124", "::ffff:c000:200/124"],
    ["ffff::1/1", "8000::/1"],
  ])("clears host bits: %s is %s", (text, canonical) => {
    const range = parseCidr(text)!;
    expect(range.text).toBe(canonical);
    expect(parseCidr(canonical)).toEqual(range);
  });

  it.each([
    ["a name", "banana"],
    ["a name with a prefix", "localhost/32"],
    ["an IPv4 prefix above 32", "10.0.0.0/33"],
    ["an IPv6 prefix above 128", "::/129"],
    ["three parts", "10.0.0/8"],
    ["an octet above 255", "300.1.1.1/8"],
    ["a leading zero", "010.0.0.1/8"],
    ["an empty prefix", "10.0.0.0/"],
    ["a negative prefix", "10.0.0.0/-1"],
    ["a four-digit prefix", "10.0.0.0/0024"],
    ["a prefix with a sign", "10.0.0.0/+8"],
    ["a netmask", "10.0.0.0/255.0.0.0"],
    ["a letter prefix", "10.0.0.0/x"],
    ["two prefixes", "10.0.0.0/24/1"],
    ["a zone id", "fe80::1%eth0/64"],
    ["a bad IPv6", "2001:db8::g/32"],
    ["two ::", "1::2::3/64"],
    ["a blank inside", "10.0.0.0 /8"],
    ["nothing", ""],
    ["blanks", "   "],
    ["a slash only", "/24"],
  ])("refuses %s (%j)", (_label, text) => {
    expect(parseCidr(text)).toBeNull();
  });

  it("refuses what is not a string", () => {
    for (const value of [undefined, null, 24, {}, ["10.0.0.0/8"]]) expect(parseCidr(value)).toBeNull();
  });
});

describe("the same meaning as PostgreSQL", () => {
  const prefixes = [
    "10.1.2.3/24",
    "10.1.2.0/24",
    "192.168.7.9",
    "0.0.0.0/0",
    "255.255.255.255/1",
    "2001:db8:abcd:12::5/64",
    "2001:db8::1",
    "2001:db8::ffff/120",
    "::ffff:10.0.0.0/104",
    "::ffff:192.0.2.9/124",
    "::192.0.2.1",
    "::192.0.2.1/120",
    "::/0",
    "1:2:3:4:5:6:7:8/127",
  ];

  it("a prefix is the network PostgreSQL's network(inet) gives, in text its cidr reads back equal", async () => {
    const rows = await rawQuery<{ input: string; pg: string; ours: string }>(
      adminDatabaseUrl(),
      "SELECT t.input, network(t.input::inet)::text AS pg, t.ours::cidr::text AS ours FROM unnest($1::text[], $2::text[]) AS t(input, ours)",
      [prefixes, prefixes.map((p) => parseCidr(p)!.text)],
    );
    for (const r of rows) expect([r.input, r.ours]).toEqual([r.input, r.pg]);
  });

  it("an address is the one PostgreSQL's inet stores", async () => {
    const addresses = ["10.0.0.1", "::1", "::ffff:192.0.2.1", "::192.0.2.1", "2001:DB8::1", "1:2:3:4:5:6:1.2.3.4"];
    const rows = await rawQuery<{ same: boolean }>(
      adminDatabaseUrl(),
      "SELECT t.input::inet = t.ours::inet AS same FROM unnest($1::text[], $2::text[]) AS t(input, ours)",
      [addresses, addresses.map((a) => parseIp(a)!.text)],
    );
    expect(rows.map((r) => r.same)).toEqual(addresses.map(() => true));
  });
});

describe("prefixContains", () => {
  const v4 = parseCidr("10.1.0.0/16")!;
  const v6 = parseCidr("2001:db8::/32")!;
  const mapped = parseCidr("::ffff:10.0.0.0/104")!;

  it("holds the addresses of its range, ends included", () => {
    expect(prefixContains(v4, parseIp("10.1.0.0")!)).toBe(true);
    expect(prefixContains(v4, parseIp("10.1.255.255")!)).toBe(true);
    expect(prefixContains(v4, parseIp("10.2.0.0")!)).toBe(false);
    expect(prefixContains(v6, parseIp("2001:db8:ffff::1")!)).toBe(true);
    expect(prefixContains(v6, parseIp("2001:db9::")!)).toBe(false);
  });

  it("keeps the families apart: an IPv4-mapped address is IPv6", () => {
    expect(prefixContains(mapped, parseIp("::ffff:10.1.2.3")!)).toBe(true);
    expect(prefixContains(mapped, parseIp("10.1.2.3")!)).toBe(false);
    expect(prefixContains(v4, parseIp("::ffff:10.1.2.3")!)).toBe(false);
    expect(prefixContains(parseCidr("::/0")!, parseIp("10.1.2.3")!)).toBe(false);
    expect(prefixContains(parseCidr("0.0.0.0/0")!, parseIp("::1")!)).toBe(false);
  });

  it("knows the widths", () => {
    expect(ADDRESS_BITS).toEqual({ 4: 32, 6: 128 });
  });
});
