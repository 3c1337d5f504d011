/**
 * The address-to-AS table from MMDB files: the test writer checked against the real `maxmind` Reader, the tree walk
 * over the three formats (GeoLite2-ASN, ipinfo, iptoasn-derived) in IPv4 and IPv6 trees, bad files, the upload route
 * (POST /flow/asn/mmdb) with its permissions and limits, `nms flows import-asn FILE.mmdb` run from dist, and flows
 * named from the imported table. The fixtures are written at test time by test/support/mmdbWriter.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Reader } from "maxmind";
import { expectError } from "../../../test/support/assertions.js";
import { dataSet, ip4, ip6, ipfixMessage, sendDatagrams, templateSet, u, IPV4_FLOW_FIELDS } from "../../../test/support/flowPeers.js";
import { mmdbValue, writeMmdb, type MmdbEntry, type MmdbWriteOptions } from "../../../test/support/mmdbWriter.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { flowsCli } from "./cli.js";
import { AsnTableError, openAsnMmdb, type AsnRow } from "../lib/mmdbAsn.js";
import type { FlowCollector } from "../services/FlowCollector.js";

const dir = mkdtempSync(join(tmpdir(), "nms-mmdb-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ---- fixtures: the three formats ------------------------------------------------------------------------------------

/** GeoLite2-ASN: autonomous_system_number (uint32), autonomous_system_organization. */
const geolite = (asn: number, org: string) => ({ autonomous_system_number: asn, autonomous_system_organization: org });
const GEOLITE: MmdbEntry[] = [
  { prefix: "1.0.0.0/24", record: geolite(13335, "CLOUDFLARENET") },
  { prefix: "192.0.2.0/24", record: geolite(64500, "EXAMPLE-NET") },
  { prefix: "192.0.2.128/25", record: geolite(64501, "MORE-SPECIFIC") },
  { prefix: "198.51.100.0/24", record: geolite(64502, "OTHER-NET") },
  { prefix: "203.0.113.0/24", record: { autonomous_system_organization: "NO NUMBER" } },
  { prefix: "2001:db8::/32", record: geolite(64510, "V6-NET") },
  { prefix: "2001:db8:1::/48", record: geolite(64511, "V6-MORE") },
  { prefix: "2400:cb00::/32", record: geolite(13335, "CLOUDFLARENET") },
];
const GEOLITE_ROWS: AsnRow[] = [
  { prefix: "1.0.0.0/24", asn: 13335, name: "CLOUDFLARENET" },
  { prefix: "192.0.2.0/25", asn: 64500, name: "EXAMPLE-NET" },
  { prefix: "192.0.2.128/25", asn: 64501, name: "MORE-SPECIFIC" },
  { prefix: "198.51.100.0/24", asn: 64502, name: "OTHER-NET" },
  { prefix: "2001:db8::/48", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:1::/48", asn: 64511, name: "V6-MORE" },
  { prefix: "2001:db8:2::/47", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:4::/46", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:8::/45", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:10::/44", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:20::/43", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:40::/42", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:80::/41", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:100::/40", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:200::/39", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:400::/38", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:800::/37", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:1000::/36", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:2000::/35", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:4000::/34", asn: 64510, name: "V6-NET" },
  { prefix: "2001:db8:8000::/33", asn: 64510, name: "V6-NET" },
  { prefix: "2400:cb00::/32", asn: 13335, name: "CLOUDFLARENET" },
];

/** ipinfo's free ASN database (asn "AS13335", name, domain) and its country+ASN one (as_name, as_domain). */
const IPINFO: MmdbEntry[] = [
  { prefix: "1.0.0.0/24", record: { asn: "AS13335", name: "Cloudflare, Inc.", domain: "cloudflare.com" } },
  { prefix: "8.8.8.0/24", record: { asn: "AS15169", as_name: "Google LLC", as_domain: "google.com", country: "US", continent: "NA" } },
  { prefix: "9.9.9.0/24", record: { asn: "AS19281", domain: "quad9.net" } },
  { prefix: "10.0.0.0/8", record: { asn: "", name: "private" } },
  { prefix: "100.64.0.0/10", record: { country: "ZZ" } },
];
const IPINFO_ROWS: AsnRow[] = [
  { prefix: "1.0.0.0/24", asn: 13335, name: "Cloudflare, Inc." },
  { prefix: "8.8.8.0/24", asn: 15169, name: "Google LLC" },
  { prefix: "9.9.9.0/24", asn: 19281, name: "quad9.net" },
];

/** iptoasn-derived MMDBs: as_number + as_description (iptoasn's TSV columns), or asn + organization; AS 0 = not routed. */
const IPTOASN: MmdbEntry[] = [
  { prefix: "1.0.4.0/22", record: { as_number: mmdbValue("uint32", 38803), as_description: "GTELECOM-AUSTRALIA", country_code: "AU" } },
  { prefix: "1.0.8.0/21", record: { as_number: 0, as_description: "Not routed", country_code: "None" } },
  { prefix: "2a00:1450::/29", record: { asn: mmdbValue("uint16", 15169), organization: "GOOGLE" } },
  { prefix: "2c0f:f000::/32", record: { ASN: 4200000000n, Organization: "BIG-ASN" } },
];
const IPTOASN_ROWS: AsnRow[] = [
  { prefix: "1.0.4.0/22", asn: 38803, name: "GTELECOM-AUSTRALIA" },
  { prefix: "2a00:1450::/29", asn: 15169, name: "GOOGLE" },
  { prefix: "2c0f:f000::/32", asn: 4200000000, name: "BIG-ASN" },
];

const sorted = (rows: Iterable<AsnRow>) => [...rows].sort((a, b) => a.prefix.localeCompare(b.prefix));
const rowsOf = (buf: Buffer) => sorted(openAsnMmdb(buf).rows());

/** What reading the buffer throws (or null when it reads). */
function readError(buf: Buffer): unknown {
  try {
    for (const _row of openAsnMmdb(buf).rows());
    return null;
  } catch (err) {
    return err;
  }
}

describe("the test MMDB writer, read by the real maxmind Reader", () => {
  it.each([
    [6, 24],
    [6, 28],
    [6, 32],
    [4, 24],
    [4, 28],
    [4, 32],
  ] as const)("IPv%i tree, record size %i: every lookup answers what was written, with its prefix length", (ipVersion, recordSize) => {
    const entries = ipVersion === 4 ? GEOLITE.filter((e) => !e.prefix.includes(":")) : GEOLITE;
    const reader = new Reader<Record<string, unknown>>(writeMmdb(entries, { ipVersion, recordSize, databaseType: "GeoLite2-ASN" }));
    expect(reader.metadata).toMatchObject({ ipVersion, recordSize, databaseType: "GeoLite2-ASN", binaryFormatMajorVersion: 2 });
    expect(reader.getWithPrefixLength("1.0.0.77")).toEqual([geolite(13335, "CLOUDFLARENET"), 24]);
    expect(reader.getWithPrefixLength("192.0.2.1")).toEqual([geolite(64500, "EXAMPLE-NET"), 25]);
    expect(reader.getWithPrefixLength("192.0.2.200")).toEqual([geolite(64501, "MORE-SPECIFIC"), 25]);
    expect(reader.get("203.0.113.9")).toEqual({ autonomous_system_organization: "NO NUMBER" });
    expect(reader.get("192.0.3.1")).toBeNull();
    expect(reader.get("8.8.8.8")).toBeNull();
    if (ipVersion === 6) {
      expect(reader.getWithPrefixLength("2001:db8:1::5")).toEqual([geolite(64511, "V6-MORE"), 48]);
      expect(reader.getWithPrefixLength("2001:db8:ffff::1")).toEqual([geolite(64510, "V6-NET"), 33]);
      expect(reader.get("2001:db9::1")).toBeNull();
      // The IPv4 aliases MaxMind's databases carry: ::ffff:a.b.c.d and 6to4 2002:aabb:ccdd::.
      expect(reader.get("::ffff:198.51.100.1")).toEqual(geolite(64502, "OTHER-NET"));
      expect(reader.get("2002:c633:6401::1")).toEqual(geolite(64502, "OTHER-NET"));
    }
  });

  it("writes every data type the format has, and repeated strings as pointers the Reader follows", () => {
    const record = {
      text: "é ünïcode",
      u16: mmdbValue("uint16", 65535),
      u32: 4294967295,
      u64: 18446744073709551615n,
      u128: 2n ** 100n,
      i32: -42,
      dbl: 1.25,
      flt: mmdbValue("float", 0.5),
      yes: true,
      no: false,
      raw: Buffer.from([1, 2, 3]),
      list: [1, "two", [3]],
      nested: { deeper: { text: "é ünïcode" } },
      long: "x".repeat(70000),
    };
    const buf = writeMmdb(
      [
        { prefix: "10.0.0.0/8", record },
        { prefix: "11.0.0.0/8", record: { other: "é ünïcode" } },
      ],
      { ipVersion: 4, recordSize: 24 },
    );
    const reader = new Reader<Record<string, unknown>>(buf);
    expect(reader.get("10.1.2.3")).toEqual({ ...record, u16: 65535, flt: 0.5 });
    expect(reader.get("11.1.2.3")).toEqual({ other: "é ünïcode" });
    // The second copy of the string is a pointer: the file holds it once (plus its copy inside "nested", also a pointer).
    expect(buf.indexOf(Buffer.from("é ünïcode"))).toBe(buf.lastIndexOf(Buffer.from("é ünïcode")));
  });
});

describe("reading an AS table out of an MMDB file", () => {
  it.each([24, 28, 32] as const)("GeoLite2-ASN, IPv6 tree with IPv4 aliases, record size %i: IPv4 networks as IPv4 prefixes, each once", (recordSize) => {
    const table = openAsnMmdb(writeMmdb(GEOLITE, { recordSize, databaseType: "GeoLite2-ASN" }));
    expect(table.info).toMatchObject({ databaseType: "GeoLite2-ASN", ipVersion: 6, recordSize });
    expect(sorted(table.rows())).toEqual(sorted(GEOLITE_ROWS));
    // 22 rows + the record without a number; the aliases ::ffff:0:0/96 and 2002::/16 add nothing.
    expect(table.stats).toMatchObject({ networks: 23, rows: 22, skipped: 1 });
  });

  it("GeoLite2-ASN in an IPv4 tree, and an IPv6 tree without aliases, give the same IPv4 prefixes", () => {
    const v4 = GEOLITE.filter((e) => !e.prefix.includes(":"));
    const expected = GEOLITE_ROWS.filter((r) => !r.prefix.includes(":"));
    expect(rowsOf(writeMmdb(v4, { ipVersion: 4, recordSize: 24 }))).toEqual(expected);
    expect(rowsOf(writeMmdb(v4, { ipVersion: 6, recordSize: 28, aliasIpv4: false }))).toEqual(expected);
  });

  it("ipinfo: asn as AS13335 text, name or as_name, the domain when there is no name; an empty asn and records without one are skipped", () => {
    const table = openAsnMmdb(writeMmdb(IPINFO, { ipVersion: 6, recordSize: 32, databaseType: "ipinfo generic_asn_free.mmdb" }));
    expect(sorted(table.rows())).toEqual(IPINFO_ROWS);
    expect(table.stats).toMatchObject({ networks: 5, rows: 3, skipped: 2 });
    expect(rowsOf(writeMmdb(IPINFO, { ipVersion: 4, recordSize: 24 }))).toEqual(IPINFO_ROWS);
  });

  it("iptoasn-derived: as_number + as_description, asn + organization (any case, uint16 or uint64); AS 0 (not routed) skipped", () => {
    expect(rowsOf(writeMmdb(IPTOASN, { recordSize: 28, databaseType: "iptoasn" }))).toEqual(IPTOASN_ROWS);
  });

  it("names are made storable: control characters become spaces, at most 200 characters", () => {
    const rows = rowsOf(
      writeMmdb(
        [
          { prefix: "192.0.2.0/24", record: { asn: 64500, name: "A\u0000B\tC" } },
          { prefix: "198.51.100.0/24", record: { asn: 64501, name: "é".repeat(300) } },
        ],
        { ipVersion: 4, recordSize: 24 },
      ),
    );
    expect(rows.map((r) => r.name)).toEqual(["A B C", "é".repeat(200)]);
  });

  it("walks a table of 30000 networks (IPv4 and IPv6), each once", () => {
    const entries: MmdbEntry[] = [];
    for (let i = 0; i < 20000; i++) entries.push({ prefix: `10.${i >> 8}.${i & 255}.0/24`, record: geolite(64512 + (i % 500), `AS-${i % 500}`) });
    for (let i = 0; i < 10000; i++) entries.push({ prefix: `2001:db8:${i.toString(16)}::/48`, record: geolite(65000 + (i % 7), `V6-${i % 7}`) });
    const table = openAsnMmdb(writeMmdb(entries, { recordSize: 24 }));
    const rows = [...table.rows()];
    expect(rows).toHaveLength(30000);
    expect(new Set(rows.map((r) => r.prefix)).size).toBe(30000);
    expect(table.stats).toMatchObject({ networks: 30000, rows: 30000, records: 507 });
    expect(rows.find((r) => r.prefix === "10.78.31.0/24")).toEqual({ prefix: "10.78.31.0/24", asn: 64512 + 499, name: "AS-499" });
    expect(rows.find((r) => r.prefix === "2001:db8:270f::/48")).toEqual({ prefix: "2001:db8:270f::/48", asn: 65000 + (9999 % 7), name: `V6-${9999 % 7}` });
  });
});

describe("bad MMDB files: one clear AsnTableError, never another error", () => {
  const good = writeMmdb(GEOLITE, { recordSize: 28 });

  it.each([
    ["random bytes", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)), /not an MMDB file/],
    ["a CSV file", Buffer.from("prefix,asn,name\n192.0.2.0/24,64500,X\n"), /not an MMDB file/],
    ["an empty file", Buffer.alloc(0), /not an MMDB file/],
    ["a gzip-compressed MMDB", gzipSync(good), /gzip-compressed: extract the \.mmdb file first/],
    ["a file cut before its metadata", good.subarray(0, good.length - 200), /not an MMDB file/],
    ["a file whose search tree is cut", Buffer.concat([good.subarray(0, 30), good.subarray(good.indexOf(Buffer.from([0xab, 0xcd, 0xef])))]), /truncated/],
  ])("%s", (_what, buf, message) => {
    const err = readError(buf);
    expect(err).toBeInstanceOf(AsnTableError);
    expect((err as Error).message).toMatch(message);
  });

  it("records that are no maps: this is not an AS table", () => {
    const err = readError(writeMmdb([{ prefix: "192.0.2.0/24", record: "AS64500" }], { ipVersion: 4, recordSize: 24 }));
    expect(err).toBeInstanceOf(AsnTableError);
    expect((err as Error).message).toBe('the record of 192.0.2.0/24 is "AS64500", not a map of fields: this is not an AS table');
    expect((readError(writeMmdb([{ prefix: "192.0.2.0/24", record: [1, 2] }], { ipVersion: 4 })) as Error).message).toMatch(/is an array, not a map/);
  });

  it.each([
    ["a map", { asn: { number: 1 } }],
    ["text that is no number", { asn: "cloudflare" }],
    ["a negative number", { asn: -5 }],
    ["a fraction", { autonomous_system_number: 1.5 }],
    ["beyond 32 bits", { as_number: 2n ** 40n }],
    ["a boolean", { asn: true }],
  ])("an AS number field holding %s", (_what, record) => {
    const err = readError(writeMmdb([{ prefix: "192.0.2.0/24", record }], { ipVersion: 4, recordSize: 24 }));
    expect(err).toBeInstanceOf(AsnTableError);
    expect((err as Error).message).toMatch(/^the record of 192\.0\.2\.0\/24 has (asn|autonomous_system_number|as_number) .*, which is not an AS number$/);
  });

  it("no AS number in any record (a City database), or no network at all", () => {
    const city = writeMmdb([{ prefix: "192.0.2.0/24", record: { city: { names: { en: "Paris" } }, location: { latitude: 48.8 } } }], {
      databaseType: "GeoLite2-City",
    });
    expect((readError(city) as Error).message).toBe(
      'no record has an AS number (looked for autonomous_system_number, asn, as_number): is this an ASN database? (type "GeoLite2-City")',
    );
    expect((readError(writeMmdb([], { ipVersion: 4 })) as Error).message).toBe("the MMDB file holds no networks");
  });

  it("a search tree that points outside the data section, or loops", () => {
    const buf = Buffer.from(writeMmdb([{ prefix: "192.0.2.0/24", record: geolite(64500, "X") }], { ipVersion: 4, recordSize: 32 }));
    const nodes = new Reader(buf).metadata.nodeCount;
    const outside = Buffer.from(buf);
    outside.writeUInt32BE(nodes + 16 + 1_000_000, 0); // node 0, left: data far past the end
    expect((readError(outside) as Error).message).toMatch(/a record points outside the data section \(0\.0\.0\.0\/1\)/);
    const loop = Buffer.from(buf);
    loop.writeUInt32BE(0, 0); // node 0, left: node 0 again
    expect((readError(loop) as Error).message).toMatch(/damaged/);
  });

  it("every truncation and every single-byte corruption of a file either reads or throws AsnTableError", () => {
    const small = writeMmdb(GEOLITE.slice(0, 4), { ipVersion: 4, recordSize: 28 });
    let refused = 0;
    for (let len = 0; len < small.length; len++) {
      const err = readError(small.subarray(0, len));
      expect(err).toBeInstanceOf(AsnTableError);
      refused++;
    }
    let read = 0;
    for (let i = 0; i < small.length; i++) {
      for (const x of [0x00, 0xff, 0x80, 0x01]) {
        const bad = Buffer.from(small);
        bad[i] ^= x || 0x5a;
        const err = readError(bad);
        if (err === null) read++;
        else expect(err).toBeInstanceOf(AsnTableError);
      }
    }
    expect(refused).toBe(small.length);
    expect(read).toBeGreaterThan(0);
  });
});

// ---- the route, the command, and flows named from the table --------------------------------------------------------

describe("POST /flow/asn/mmdb and nms flows import-asn FILE.mmdb", () => {
  let k: TestKernel;
  let port: number;
  beforeAll(async () => {
    k = await startTestKernel({
      plugins: [inventoryPlugin, pollingPlugin, flowsPlugin],
      overrides: { pluginConfig: { flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200, asnUploadMaxMiB: 1 } } },
    });
    const listeners = (await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] };
    port = listeners.listeners.find((l) => l.name === "flows.udp")!.port;
  });
  afterAll(() => k?.stop());

  const upload = async (body: Buffer, o: { token?: string | null; query?: string; type?: string; headers?: Record<string, string> } = {}) => {
    const token = o.token === undefined ? k.adminToken : o.token;
    const res = await fetch(`${k.url}/api/v1/flow/asn/mmdb${o.query ?? ""}`, {
      method: "POST",
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": o.type ?? "application/octet-stream", ...o.headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const table = async () =>
    (
      await k
        .context("flows")
        .store.query<{ prefix: string; asn: number; name: string | null }>(
          "SELECT p.prefix::text AS prefix, p.asn::int8::float8 AS asn, n.name FROM flows.asn_prefixes p LEFT JOIN flows.asn_names n USING (asn) ORDER BY 1",
        )
    ).rows;

  it("loads each format through the route; replace=false adds; the answer counts networks and skipped ones", async () => {
    let res = await upload(writeMmdb(GEOLITE, { recordSize: 28, databaseType: "GeoLite2-ASN" }));
    expect(res).toEqual({ status: 200, body: { prefixes: 22, names: 6, networks: 23, skipped: 1, database_type: "GeoLite2-ASN", ip_version: 6 } });
    expect(sorted(await table())).toEqual(sorted(GEOLITE_ROWS));
    res = await upload(writeMmdb(IPINFO, { ipVersion: 4, recordSize: 24, databaseType: "ipinfo" }), { query: "?replace=false" });
    expect(res.body).toMatchObject({ prefixes: 3, names: 3, networks: 5, skipped: 2, ip_version: 4 });
    // 1.0.0.0/24 is in both: the later file's AS (the same number) and name win.
    expect(await table()).toHaveLength(22 + 2);
    expect((await table()).find((r) => r.prefix === "1.0.0.0/24")).toEqual({ prefix: "1.0.0.0/24", asn: 13335, name: "Cloudflare, Inc." });
    res = await upload(writeMmdb(IPTOASN, { recordSize: 32 }));
    expect(res.body).toMatchObject({ prefixes: 3, networks: 4, skipped: 1 });
    expect(sorted(await table())).toEqual(IPTOASN_ROWS);
  });

  it("a bad file answers 400 invalid_asn_table and leaves the table as it was, even when the fault comes after rows were written", async () => {
    await upload(writeMmdb(IPINFO, { ipVersion: 4 }));
    const before = await table();
    expect(before).toHaveLength(3);
    for (const bad of [
      Buffer.from("not a database at all"),
      gzipSync(writeMmdb(IPINFO)),
      writeMmdb([{ prefix: "192.0.2.0/24", record: "x" }], { ipVersion: 4 }),
    ]) {
      const res = await upload(bad);
      expectError(res, 400, "invalid_asn_table");
      expect(String((res.body as { error: { message: string } }).error.message)).toMatch(/^The file is not a usable AS table: /);
    }
    // 25000 good networks walked and written first (batches of 5000), then a record whose AS number is no number.
    const entries: MmdbEntry[] = [];
    for (let i = 0; i < 25000; i++) entries.push({ prefix: `10.${i >> 8}.${i & 255}.0/24`, record: geolite(64512, "GOOD") });
    entries.push({ prefix: "223.255.255.0/24", record: { asn: "not-a-number" } });
    const file = writeMmdb(entries, { recordSize: 24 });
    expect(file.length).toBeLessThan(1024 * 1024);
    const late = await upload(file);
    expectError(late, 400, "invalid_asn_table");
    expect((late.body as { error: { message: string } }).error.message).toContain("223.255.255.0/24");
    expect(await table()).toEqual(before);
  });

  it("permissions: no token or a bad one 401, a viewer or operator 403, a folder-scoped admin 403; media type, encoding and size", async () => {
    const file = writeMmdb(IPINFO, { ipVersion: 4 });
    expectError(await upload(file, { token: null }), 401, "unauthorized");
    expectError(await upload(file, { token: "not-a-token" }), 401, "unauthorized");
    expectError(await upload(file, { token: await k.token("viewer") }), 403, "permission_denied");
    expectError(await upload(file, { token: await k.token("operator") }), 403, "permission_denied");
    const folder = (await k.request("POST", "/node-groups", { body: { name: "mmdb-scope" } })).body as { id: string };
    expectError(await upload(file, { token: await k.token("admin", { folders: [folder.id] }) }), 403, "scope_unsupported");
    // A JSON body is the kernel's JSON parser's (binary is malformed JSON); JSON that parses is the wrong media type here.
    expectError(await upload(file, { type: "application/json" }), 400, "malformed_json");
    expectError(await upload(Buffer.from('{"entries":[]}'), { type: "application/json" }), 415, "unsupported_media_type");
    expectError(await upload(file, { type: "text/csv" }), 415, "unsupported_media_type");
    expectError(await upload(gzipSync(file), { headers: { "content-encoding": "gzip" } }), 415, "unsupported_encoding");
    expectError(await upload(Buffer.alloc(0)), 400, "invalid_asn_table");
    expectError(await upload(file, { query: "?replace=maybe" }), 400, "validation_failed");
    expectError(await upload(Buffer.alloc(1024 * 1024 + 1)), 413, "payload_too_large");
    expect((await upload(file)).status).toBe(200);
  });

  it("the OpenAPI document describes the upload", async () => {
    const doc = (await k.request("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }>>;
    };
    const op = doc.paths["/api/v1/flow/asn/mmdb"].post;
    expect(op.requestBody?.content["application/octet-stream"]).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "413", "415", "503"]));
  });

  it("conversations and top AS carry the AS names of the imported table, IPv4 and IPv6", async () => {
    expect((await upload(writeMmdb(GEOLITE, { recordSize: 24, databaseType: "GeoLite2-ASN" }))).status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    const v4 = IPV4_FLOW_FIELDS;
    const v6 = [{ id: 27, length: 16 }, { id: 28, length: 16 }, ...v4.slice(2)];
    const tail = (bytes: number) => [u(1, 6), u(2, 40000), u(2, 443), u(8, bytes), u(8, 10), u(4, now)];
    const msg = ipfixMessage({ domain: 7, exportSecs: now }, [
      templateSet(10, [
        { id: 256, fields: v4 },
        { id: 257, fields: v6 },
      ]),
      dataSet(256, [Buffer.concat([ip4("192.0.2.200"), ip4("1.0.0.1"), ...tail(5000)]), Buffer.concat([ip4("198.51.100.9"), ip4("192.0.2.5"), ...tail(3000)])]),
      dataSet(257, [Buffer.concat([ip6("2001:db8:1::1"), ip6("2400:cb00::1"), ...tail(4000)])]),
    ]);
    await sendDatagrams(port, [msg]);
    const collector = k.context("flows").get<FlowCollector>((await import("../services/FlowCollector.js")).FlowCollector);
    type Conv = { src: string; dst: string; src_asn: number; dst_asn: number; src_as_name: string | null; dst_as_name: string | null; bytes: number };
    let rows: Conv[] = [];
    const window = `from=${now - 600}&to=${now + 600}`;
    for (let i = 0; i < 100 && rows.length < 3; i++) {
      await collector.flush();
      rows = (await k.request("GET", `/flow/conversations?${window}`)).body as Conv[];
      if (rows.length < 3) await new Promise((r) => setTimeout(r, 50));
    }
    expect(
      rows.map(({ src, dst, src_asn, dst_asn, src_as_name, dst_as_name, bytes }) => ({ src, dst, src_asn, dst_asn, src_as_name, dst_as_name, bytes })),
    ).toEqual([
      { src: "192.0.2.200", dst: "1.0.0.1", src_asn: 64501, dst_asn: 13335, src_as_name: "MORE-SPECIFIC", dst_as_name: "CLOUDFLARENET", bytes: 5000 },
      { src: "2001:db8:1::1", dst: "2400:cb00::1", src_asn: 64511, dst_asn: 13335, src_as_name: "V6-MORE", dst_as_name: "CLOUDFLARENET", bytes: 4000 },
      { src: "198.51.100.9", dst: "192.0.2.5", src_asn: 64502, dst_asn: 64500, src_as_name: "OTHER-NET", dst_as_name: "EXAMPLE-NET", bytes: 3000 },
    ]);
    const top = (await k.request("GET", `/flow/top-as?${window}&dir=dst`)).body as { asn: number; name: string | null; bytes: number }[];
    expect(top.map(({ asn, name, bytes }) => ({ asn, name, bytes }))).toEqual([
      { asn: 13335, name: "CLOUDFLARENET", bytes: 9000 },
      { asn: 64500, name: "EXAMPLE-NET", bytes: 3000 },
    ]);
  });

  const cli = (args: string[], token: string) => flowsCli(args, { coreUrl: k.url, token, dataDir: dir, timeoutMs: 150_000 }); // a loaded 2-core machine: node's start and the plugins' loading alone took 9 s

  it("nms flows import-asn reads an MMDB file locally and loads it in batches; --add adds; a bad file is one line, exit 2, nothing sent", async () => {
    const admin = await k.token("admin");
    const write = (name: string, entries: MmdbEntry[], o: MmdbWriteOptions = {}) => {
      const file = join(dir, name);
      writeFileSync(file, writeMmdb(entries, o));
      return file;
    };
    const geo = write("GeoLite2-ASN.mmdb", GEOLITE, { recordSize: 28, databaseType: "GeoLite2-ASN" });
    let r = await cli(["import-asn", geo], admin);
    expect([r.status, r.stdout.trim()]).toEqual([
      0,
      `loaded 22 prefixes from ${geo} (MMDB GeoLite2-ASN, IPv6 tree: 23 networks, 1 without an AS number skipped)`,
    ]);
    expect(sorted(await table())).toEqual(sorted(GEOLITE_ROWS));
    // More than one request (10000 entries each): 12000 networks, in a file without the .mmdb extension.
    const many: MmdbEntry[] = [];
    for (let i = 0; i < 12000; i++) many.push({ prefix: `10.${i >> 8}.${i & 255}.0/24`, record: { asn: `AS${64512 + (i % 3)}`, name: `N${i % 3}` } });
    const big = write("ipinfo-asn.db", many, { ipVersion: 4, recordSize: 24 });
    r = await cli(["import-asn", big, "--add"], admin);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, expect.stringMatching(/^loaded 12000 prefixes from /), ""]);
    expect(await table()).toHaveLength(22 + 12000);
    r = await cli(["import-asn", write("iptoasn.mmdb", IPTOASN)], admin);
    expect(r.status).toBe(0);
    expect(sorted(await table())).toEqual(IPTOASN_ROWS);

    // Bad files (the other faults are the reader's, tested above): one line, exit 2, the table untouched.
    const city = write("city.mmdb", [{ prefix: "192.0.2.0/24", record: { city: "Paris" } }], { databaseType: "GeoLite2-City" });
    const res = await cli(["import-asn", city], admin);
    expect([res.status, res.stderr]).toEqual([
      2,
      `nms flows import-asn: ${city}: no record has an AS number (looked for autonomous_system_number, asn, as_number): is this an ASN database? (type "GeoLite2-City")\n`,
    ]);
    const notMmdb = join(dir, "fake.mmdb");
    writeFileSync(notMmdb, "192.0.2.0/24,64500,X\n");
    expect(await cli(["import-asn", notMmdb], admin)).toEqual({
      status: 2,
      stdout: "",
      stderr: `nms flows import-asn: ${notMmdb}: not an MMDB file (no MaxMind DB metadata marker at its end)\n`,
    });
    expect(sorted(await table())).toEqual(IPTOASN_ROWS);
    const refused = await cli(["import-asn", geo], await k.token("viewer"));
    expect([refused.status, refused.stderr.trim().split("\n").length]).toEqual([1, 1]);
    expect(refused.stderr).toContain("403");
  }, 600_000);
});
