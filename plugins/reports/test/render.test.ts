/** The renderers on a crafted document: HTML escapes what data holds, the CSV layout parses back, the PDF is text plus vector bars. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { renderCsv } from "../lib/csv.js";
import type { ReportDocument } from "../lib/document.js";
import { renderHtml } from "../lib/html.js";
import { pdfFonts, renderPdf } from "../lib/pdf.js";

const doc: ReportDocument = {
  name: 'Ops <weekly> & "friends"',
  from: "2026-11-17T00:00:00.000Z",
  to: "2026-11-24T00:00:00.000Z",
  scope: "All folders",
  generated_at: "2026-11-24T00:00:01.000Z",
  sections: [
    {
      kind: "inventory",
      title: "Nodes",
      ms: 3,
      data: {
        tables: [
          {
            title: "By vendor",
            columns: ["Vendor", "Nodes"],
            rows: [
              ["<script>alert(1)</script>", 2],
              ['Москва, "core"', 1234567.5],
              [null, 0],
            ],
          },
        ],
        charts: [{ title: "By vendor", unit: "nodes", labels: ["<b>x</b>", "Москва"], values: [2, 1] }],
      },
    },
    { kind: "flow_top", title: "Flows", ms: 1, error: "This section could not be rendered (see the service log)." },
  ],
};

it("HTML: escaped text, inline SVG, no script", () => {
  const html = renderHtml(doc);
  expect(html).not.toContain("<script>");
  expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  expect(html).toContain("<title>Ops &lt;weekly&gt; &amp; &quot;friends&quot;</title>");
  expect(html).toContain("<svg");
  expect(html).toContain("&lt;b&gt;x&lt;/b&gt;");
  expect(html).toContain("1,234,567.5");
  expect(html).toContain('class="error"');
});

it("CSV: one block per table, a failed section as an error block, quoting by RFC 4180", () => {
  const records = parse(renderCsv(doc), { relax_column_count: true, skip_empty_lines: true }) as string[][];
  expect(records).toEqual([
    ["#report", 'Ops <weekly> & "friends"', doc.from, doc.to, "All folders"],
    ["#section", "inventory", "Nodes", "By vendor"],
    ["Vendor", "Nodes"],
    ["<script>alert(1)</script>", "2"],
    ['Москва, "core"', "1234567.5"],
    ["", "0"],
    ["#section", "flow_top", "Flows", "error"],
    ["error", "This section could not be rendered (see the service log)."],
  ]);
});

it("PDF: the text reads back (Cyrillic with DejaVu) and the chart is vector bars", async () => {
  const pdf = await renderPdf(doc);
  expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
  const dir = mkdtempSync(join(tmpdir(), "nms-render-"));
  writeFileSync(join(dir, "r.pdf"), pdf);
  const text = execFileSync("pdftotext", [join(dir, "r.pdf"), "-"], { encoding: "utf8" });
  for (const s of ["Ops <weekly>", "By vendor", "<script>alert(1)</script>", "1,234,567.5", "could not be rendered"]) expect(text).toContain(s);
  if (pdfFonts().embedded) expect(text).toContain("Москва");
  expect(pdf.includes(Buffer.from("/Subtype /Image"))).toBe(false);
});
