/** A run as one self-contained HTML page: tables and inline SVG bar charts, no script, no external resource. */
import type { Cell } from "../contract.js";
import { formatNumber, type ReportDocument } from "./document.js";
import { barChartSvg, escapeXml } from "./svg.js";

const cell = (c: Cell) => (typeof c === "number" ? `<td class="n">${escapeXml(formatNumber(c))}</td>` : `<td>${escapeXml(c ?? "")}</td>`);

export function renderHtml(doc: ReportDocument): string {
  const parts: string[] = [];
  for (const s of doc.sections) {
    parts.push(`<section data-kind="${escapeXml(s.kind)}"><h2>${escapeXml(s.title)}</h2>`);
    if (s.error) parts.push(`<p class="error">${escapeXml(s.error)}</p>`);
    for (const note of s.data?.notes ?? []) parts.push(`<p class="note">${escapeXml(note)}</p>`);
    for (const chart of s.data?.charts ?? []) parts.push(`<figure>${barChartSvg(chart)}</figure>`);
    for (const t of s.data?.tables ?? []) {
      parts.push(`<table><caption>${escapeXml(t.title)}</caption><thead><tr>${t.columns.map((c) => `<th>${escapeXml(c)}</th>`).join("")}</tr></thead><tbody>`);
      for (const r of t.rows) parts.push(`<tr>${r.map(cell).join("")}</tr>`);
      if (!t.rows.length) parts.push(`<tr><td colspan="${t.columns.length}" class="note">No rows.</td></tr>`);
      parts.push(`</tbody></table>`);
    }
    parts.push(`</section>`);
  }
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(doc.name)}</title>
<style>
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}caption{text-align:left;font-weight:bold;padding:0.3em 0}
th,td{border:1px solid #ccc;padding:0.25em 0.6em}th{background:#eef2f7;text-align:left}td.n{text-align:right}
.note{color:#666}.error{color:#a00}figure{margin:0.5em 0}
</style></head><body>
<h1>${escapeXml(doc.name)}</h1>
<p class="meta">From ${escapeXml(doc.from)} to ${escapeXml(doc.to)} · ${escapeXml(doc.scope)} · generated ${escapeXml(doc.generated_at)}</p>
${parts.join("\n")}
</body></html>
`;
}
