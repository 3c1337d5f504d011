import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { CommandDeclaration } from "../../../core/index.js";
import { looksLikeMmdb, openAsnMmdb, type AsnMmdb } from "../lib/mmdbAsn.js";

const USAGE = `Usage:
  nms flows import-asn FILE --core URL --token TOKEN [--add]

Loads the address-to-AS table of the flows plugin through the core's POST /api/v1/flow/asn (an admin API
token; NMS_TOKEN and NMS_CORE may stand for --token and --core). FILE is either
  - an MMDB file (MaxMind DB: GeoLite2-ASN, ipinfo's ASN or country+ASN database, an iptoasn-derived MMDB),
    read here: every network with an AS number becomes a prefix; or
  - a CSV file of prefix,asn,name lines (a header line and # comments are skipped; the name may be quoted
    or hold commas).
The whole file is checked before anything is sent (a bad file: one line, exit 2). The table is replaced,
or added to with --add. Where to get a table: docs/flows.md ("Loading the AS table").`;

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
  let source: { batches: () => Iterable<AsnLine[]>; what: string };
  try {
    source = await readTable(file);
  } catch (err) {
    process.stderr.write(`nms flows import-asn: ${file}: ${String((err as Error).message).split("\n")[0]}\n`);
    return 2;
  }
  const base = core.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
  let prefixes = 0;
  let first = true;
  for (const batch of source.batches()) {
    let res: Response;
    try {
      res = await fetch(`${base}/api/v1/flow/asn`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ entries: batch, replace: !values.add && first }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      process.stderr.write(`nms flows import-asn: cannot reach the core at ${base}: ${cause?.code ?? cause?.message ?? (err as Error).message}\n`);
      return 1;
    }
    first = false;
    const body = (await res.json().catch(() => null)) as { prefixes?: number; error?: { message: string } } | null;
    if (res.status !== 200) {
      process.stderr.write(`nms flows import-asn: the core answered ${res.status}: ${body?.error?.message ?? "no message"}\n`);
      return 1;
    }
    prefixes += body?.prefixes ?? 0;
  }
  process.stdout.write(`loaded ${prefixes} prefixes from ${file}${source.what}\n`);
  return 0;
}

/**
 * The file's entries in batches of CHUNK (at least one batch, possibly empty, so that replacing with an empty file
 * empties the table). An MMDB file is walked once to check it all (a fault throws before anything is sent), then
 * again batch by batch, so a large table is never held whole in memory.
 */
async function readTable(file: string): Promise<{ batches: () => Iterable<AsnLine[]>; what: string }> {
  const bytes = await readFile(file);
  if (looksLikeMmdb(bytes)) {
    const table = openAsnMmdb(bytes);
    for (const _row of table.rows()); // the check: every record decoded once
    const { networks, skipped } = table.stats;
    const what = ` (MMDB ${table.info.databaseType || "of no type"}, IPv${table.info.ipVersion} tree: ${networks} networks, ${skipped} without an AS number skipped)`;
    return { batches: () => mmdbBatches(table), what };
  }
  if (/\.mmdb$/i.test(file) || (bytes[0] === 0x1f && bytes[1] === 0x8b)) openAsnMmdb(bytes); // throws the reason it is no MMDB file
  const entries = parseAsnCsv(bytes.toString("utf8"));
  const batches = function* () {
    for (let i = 0; i < entries.length || i === 0; i += CHUNK) yield entries.slice(i, i + CHUNK);
  };
  return { batches, what: "" };
}

function* mmdbBatches(table: AsnMmdb): Generator<AsnLine[]> {
  let batch: AsnLine[] = [];
  let sent = false;
  for (const row of table.rows()) {
    batch.push(row);
    if (batch.length === CHUNK) {
      yield batch;
      sent = true;
      batch = [];
    }
  }
  if (batch.length || !sent) yield batch;
}

export const importAsnCommand: CommandDeclaration = {
  description: "flows import-asn FILE: load the address-to-AS table (an MMDB file or a prefix,asn,name CSV) through the core",
  run,
};
