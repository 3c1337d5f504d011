/**
 * A run as ONE CSV file (RFC 4180, csv-stringify) holding one block per table: a title row
 * `#section,<kind>,<section title>,<table title>`, the header row, the data rows, then an empty line. A section that
 * failed has the block `#section,<kind>,<title>,error` followed by `error,<message>`. Numbers are written raw.
 */
import { stringify } from "csv-stringify/sync";
import type { ReportDocument } from "./document.js";

export function renderCsv(doc: ReportDocument): string {
  const records: (string | number | null)[][] = [["#report", doc.name, doc.from, doc.to, doc.scope], []];
  for (const s of doc.sections) {
    if (s.error) {
      records.push(["#section", s.kind, s.title, "error"], ["error", s.error], []);
      continue;
    }
    for (const t of s.data?.tables ?? []) {
      records.push(["#section", s.kind, s.title, t.title], t.columns, ...t.rows, []);
    }
  }
  return stringify(records, { cast: { number: (v) => String(v) } });
}
