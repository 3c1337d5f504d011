import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { CommandDeclaration } from "../../../core/index.js";

const USAGE = `Usage:
  nms flows import-asn FILE --core URL --token TOKEN [--add]

Loads the address-to-AS table of the flows plugin from a CSV file of prefix,asn,name lines (a header line
and # comments are skipped; the name may be quoted or hold commas), through the core's POST /api/v1/flow/asn
(an admin API token; NMS_TOKEN and NMS_CORE may stand for --token and --core). The table is replaced, or
added to with --add. Where to get one: iptoasn.com's ip2asn-combined.tsv (ranges: convert
them to prefixes as docs/flows.md shows), or any prefix,asn,name export of a routing table. MMDB files (GeoLite2-ASN, ipinfo) are
not read yet.`;

/** Entries per request (the core's body limit is 1 MiB: about 40 bytes an entry). */
const CHUNK = 10_000;

export interface AsnLine {
  prefix: string;
  asn: number;
  name: string | null;
}

/** The entries of a prefix,asn,name CSV (header, blank lines and # comments skipped); throws naming the first bad line. */
export function parseAsnCsv(text: string): AsnLine[] {
  const out: AsnLine[] = [];
  const lines = text.split(/\r?\n/);
  let header = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line || line.startsWith("#")) continue;
    const [prefix, asn, ...rest] = line.split(",");
    // A header: the first line that is no comment, whose second column is no AS number.
    if (out.length === 0 && !header && !/^(AS)?\d+$/i.test((asn ?? "").trim())) {
      header = true;
      continue;
    }
    const n = Number((asn ?? "").trim().replace(/^AS/i, ""));
    if (!prefix?.includes("/") || !Number.isInteger(n) || n < 0 || n > 4294967295)
      throw new Error(`line ${i + 1}: expected prefix,asn,name, got ${JSON.stringify(line.slice(0, 80))}`);
    const name = rest
      .join(",")
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .replace(/""/g, '"');
    out.push({ prefix: prefix.trim(), asn: n, name: name || null });
  }
  return out;
}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { core: { type: "string" }, token: { type: "string" }, add: { type: "boolean" }, help: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help || positionals[0] !== "import-asn" || positionals.length !== 2) {
    process.stdout.write(USAGE + "\n");
    return values.help ? 0 : 2;
  }
  const core = values.core ?? process.env.NMS_CORE;
  const token = values.token ?? process.env.NMS_TOKEN;
  if (!core || !token) {
    process.stderr.write("nms flows import-asn: --core and --token (or NMS_CORE and NMS_TOKEN) are required\n");
    return 2;
  }
  const file = positionals[1];
  if (/\.mmdb$/i.test(file)) {
    process.stderr.write("nms flows import-asn: MMDB files are not read yet; convert the table to prefix,asn,name CSV\n");
    return 2;
  }
  let entries: AsnLine[];
  try {
    entries = parseAsnCsv(await readFile(file, "utf8"));
  } catch (err) {
    process.stderr.write(`nms flows import-asn: ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  const base = core.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
  let prefixes = 0;
  for (let i = 0; i < entries.length || i === 0; i += CHUNK) {
    const res = await fetch(`${base}/api/v1/flow/asn`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ entries: entries.slice(i, i + CHUNK), replace: !values.add && i === 0 }),
    });
    const body = (await res.json().catch(() => null)) as { prefixes?: number; error?: { message: string } } | null;
    if (res.status !== 200) {
      process.stderr.write(`nms flows import-asn: the core answered ${res.status}: ${body?.error?.message ?? "no message"}\n`);
      return 1;
    }
    prefixes += body?.prefixes ?? 0;
    if (!entries.length) break;
  }
  process.stdout.write(`loaded ${prefixes} prefixes from ${file}\n`);
  return 0;
}

export const importAsnCommand: CommandDeclaration = {
  description: "flows import-asn FILE: load the address-to-AS table (prefix,asn,name CSV) through the core",
  run,
};
