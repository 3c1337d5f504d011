/**
 * A run as a PDF (pdfkit): headings, bar charts drawn as vector rectangles, and tables as text columns. Text is set
 * in DejaVu Sans (fonts-dejavu-core: Latin, Greek, Cyrillic and more) when the font files exist, else in the
 * built-in Helvetica (Latin-1 only).
 */
import { existsSync } from "node:fs";
import PDFDocument from "pdfkit";
import type { Cell, SectionChart, SectionTable } from "../contract.js";
import { compact, formatNumber, type ReportDocument } from "./document.js";

const FONT_DIR = "/usr/share/fonts/truetype/dejavu";
const REGULAR = `${FONT_DIR}/DejaVuSans.ttf`;
const BOLD = `${FONT_DIR}/DejaVuSans-Bold.ttf`;

const MARGIN = 40;
const PAGE_W = 595.28; // A4
const PAGE_H = 841.89;
const CONTENT_W = PAGE_W - 2 * MARGIN;
const BOTTOM = PAGE_H - MARGIN;

type Doc = InstanceType<typeof PDFDocument>;

/** The fonts used: DejaVu when installed, else Helvetica. */
export function pdfFonts(): { regular: string; bold: string; embedded: boolean } {
  return existsSync(REGULAR) && existsSync(BOLD)
    ? { regular: REGULAR, bold: BOLD, embedded: true }
    : { regular: "Helvetica", bold: "Helvetica-Bold", embedded: false };
}

function ensure(doc: Doc, height: number): void {
  if (doc.y + height > BOTTOM) doc.addPage();
}

function chart(doc: Doc, c: SectionChart, fonts: { regular: string; bold: string }): void {
  const n = Math.min(c.labels.length, c.values.length);
  const barH = 12;
  const gap = 4;
  const labelW = 170;
  const barW = CONTENT_W - labelW - 90;
  const max = Math.max(...c.values.slice(0, n).map((v) => Math.abs(v)), c.unit === "%" ? 100 : 0, 1e-9);
  ensure(doc, 20 + Math.min(n, 10) * (barH + gap));
  doc.font(fonts.bold).fontSize(10).fillColor("#222").text(c.title, MARGIN, doc.y);
  doc.moveDown(0.3);
  for (let i = 0; i < n; i++) {
    ensure(doc, barH + gap);
    const y = doc.y;
    const w = Math.max(1, (Math.abs(c.values[i]) / max) * barW);
    doc.font(fonts.regular).fontSize(8).fillColor("#222");
    doc.text(c.labels[i], MARGIN, y + 2, { width: labelW - 6, align: "right", lineBreak: false, ellipsis: true, height: barH });
    doc.rect(MARGIN + labelW, y, w, barH).fill("#3b6ea5");
    doc.fillColor("#222").text(compact(c.values[i], c.unit), MARGIN + labelW + w + 4, y + 2, { lineBreak: false });
    doc.x = MARGIN;
    doc.y = y + barH + gap;
  }
  doc.moveDown(0.6);
}

const text = (c: Cell) => (typeof c === "number" ? formatNumber(c) : (c ?? ""));

function table(doc: Doc, t: SectionTable, fonts: { regular: string; bold: string }): void {
  const cols = Math.max(t.columns.length, 1);
  const colW = CONTENT_W / cols;
  const row = (cells: string[], bold: boolean) => {
    doc.font(bold ? fonts.bold : fonts.regular).fontSize(8);
    const h = Math.max(...cells.map((c) => doc.heightOfString(c, { width: colW - 4 })), 10) + 3;
    ensure(doc, h);
    const y = doc.y;
    cells.forEach((c, i) => doc.fillColor("#222").text(c, MARGIN + i * colW, y, { width: colW - 4 }));
    doc
      .moveTo(MARGIN, y + h - 1)
      .lineTo(MARGIN + CONTENT_W, y + h - 1)
      .lineWidth(0.3)
      .strokeColor("#bbbbbb")
      .stroke();
    doc.x = MARGIN;
    doc.y = y + h;
  };
  ensure(doc, 40);
  doc.font(fonts.bold).fontSize(10).fillColor("#222").text(t.title, MARGIN, doc.y);
  doc.moveDown(0.2);
  row(t.columns, true);
  for (const r of t.rows) row(r.map(text), false);
  if (!t.rows.length) row(["No rows."], false);
  doc.moveDown(0.8);
}

export function renderPdf(rep: ReportDocument): Promise<Buffer> {
  const fonts = pdfFonts();
  const doc = new PDFDocument({ size: "A4", margin: MARGIN, info: { Title: rep.name, Producer: "nms reports", Creator: "nms reports" } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.font(fonts.bold).fontSize(18).fillColor("#222").text(rep.name);
  doc.font(fonts.regular).fontSize(9).fillColor("#555").text(`From ${rep.from} to ${rep.to} · ${rep.scope} · generated ${rep.generated_at}`);
  doc.moveDown(1);
  for (const s of rep.sections) {
    ensure(doc, 60);
    doc.font(fonts.bold).fontSize(14).fillColor("#222").text(s.title, MARGIN, doc.y);
    doc.moveDown(0.4);
    if (s.error) doc.font(fonts.regular).fontSize(9).fillColor("#aa0000").text(s.error).moveDown(0.5);
    for (const note of s.data?.notes ?? []) doc.font(fonts.regular).fontSize(9).fillColor("#666").text(note).moveDown(0.3);
    for (const c of s.data?.charts ?? []) chart(doc, c, fonts);
    for (const t of s.data?.tables ?? []) table(doc, t, fonts);
  }
  doc.end();
  return done;
}
