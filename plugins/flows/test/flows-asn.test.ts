/** The address-to-AS table: the CSV reader, and `nms flows import-asn` loading it through the core (run from dist, as operators run it); MMDB files: flows-mmdb.test.ts. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { flowsCli } from "./cli.js";
import { parseAsnCsv } from "../services/importAsnCommand.js";

const dir = mkdtempSync(join(tmpdir(), "nms-asn-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseAsnCsv", () => {
  it("reads prefix,asn,name lines; skips a header, blanks and comments; names may be quoted or hold commas", () => {
    expect(parseAsnCsv('prefix,asn,name\n# comment\n\n192.0.2.0/24,64500,EXAMPLE\n2001:db8::/32,AS64501,"Other, Inc."\n198.51.100.0/24,64502,\n')).toEqual([
      { prefix: "192.0.2.0/24", asn: 64500, name: "EXAMPLE" },
      { prefix: "2001:db8::/32", asn: 64501, name: "Other, Inc." },
      { prefix: "198.51.100.0/24", asn: 64502, name: null },
    ]);
  });

  it("keeps a first line whose AS number is written AS13335 (no header), and takes a header after comments", () => {
    expect(parseAsnCsv("1.0.0.0/24,AS13335,CLOUD\n")).toEqual([{ prefix: "1.0.0.0/24", asn: 13335, name: "CLOUD" }]);
    expect(parseAsnCsv("# made today\nprefix,asn,name\n1.0.0.0/24,13335,CLOUD\n")).toHaveLength(1);
  });

  it("names the first bad line", () => {
    expect(() => parseAsnCsv("192.0.2.0/24,64500,A\n192.0.2.1,64500,B\n")).toThrow("line 2");
    expect(() => parseAsnCsv("192.0.2.0/24,64500,A\n192.0.2.0/24,not-a-number,A\n")).toThrow("line 2");
    expect(() => parseAsnCsv("192.0.2.0/24,4294967296,A\n")).toThrow("line 1");
  });
});

describe("nms flows import-asn", () => {
  let k: TestKernel;
  beforeAll(async () => {
    k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, flowsPlugin] });
  });
  afterAll(() => k?.stop());

  const cli = (args: string[], token: string) => flowsCli(args, { coreUrl: k.url, token, dataDir: dir, timeoutMs: 30000 });

  it("loads a CSV through the core, replacing the table; --add adds; errors are one line with a non-zero exit", async () => {
    const file = join(dir, "asn.csv");
    writeFileSync(file, "192.0.2.0/24,64500,EXAMPLE\n198.51.100.0/24,64501,OTHER\n");
    const admin = await k.token("admin");
    const r = await cli(["import-asn", file], admin);
    expect([r.status, r.stdout.trim()]).toEqual([0, `loaded 2 prefixes from ${file}`]);
    writeFileSync(file, "203.0.113.0/24,64502,THIRD\n");
    expect((await cli(["import-asn", file, "--add"], admin)).status).toBe(0);
    const count = await k.context("flows").store.query<{ n: number }>("SELECT count(*)::int AS n FROM flows.asn_prefixes");
    expect(count.rows[0].n).toBe(3);
    expect((await cli(["import-asn", file], admin)).status).toBe(0);
    expect((await k.context("flows").store.query<{ n: number }>("SELECT count(*)::int AS n FROM flows.asn_prefixes")).rows[0].n).toBe(1);

    const refused = await cli(["import-asn", file], await k.token("viewer"));
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toContain("403");
    writeFileSync(file, "nonsense\n192.0.2.0/24,x,y\n");
    const bad = await cli(["import-asn", file], admin);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("line 2");
    const missing = await cli(["import-asn", join(dir, "GeoLite2-ASN.mmdb")], admin);
    expect([missing.status, missing.stderr]).toEqual([2, expect.stringContaining("no such file or directory")]);
  }, 180_000); // six CLI processes, each starting node and loading the plugins: slow on a loaded 2-core machine
});
