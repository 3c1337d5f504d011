/** A horizontal bar chart as inline SVG (no script, no external reference): one bar per label. */
import type { SectionChart } from "../contract.js";
import { compact } from "./document.js";

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

const BAR_H = 18;
const GAP = 6;
const LABEL_W = 220;
const BAR_W = 360;

export function barChartSvg(chart: SectionChart): string {
  const n = Math.min(chart.labels.length, chart.values.length);
  const max = Math.max(...chart.values.slice(0, n).map((v) => Math.abs(v)), chart.unit === "%" ? 100 : 0, 1e-9);
  const height = 28 + n * (BAR_H + GAP);
  const width = LABEL_W + BAR_W + 140;
  const bars: string[] = [];
  for (let i = 0; i < n; i++) {
    const y = 24 + i * (BAR_H + GAP);
    const w = Math.max(1, Math.round((Math.abs(chart.values[i]) / max) * BAR_W));
    const label = chart.labels[i].length > 34 ? `${chart.labels[i].slice(0, 33)}…` : chart.labels[i];
    bars.push(
      `<text x="${LABEL_W - 6}" y="${y + 13}" text-anchor="end" font-size="12">${escapeXml(label)}</text>` +
        `<rect x="${LABEL_W}" y="${y}" width="${w}" height="${BAR_H}" fill="#3b6ea5"><title>${escapeXml(`${chart.labels[i]}: ${chart.values[i]}`)}</title></rect>` +
        `<text x="${LABEL_W + w + 6}" y="${y + 13}" font-size="12">${escapeXml(compact(chart.values[i], chart.unit))}</text>`,
    );
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">` +
    `<title>${escapeXml(chart.title)}</title><text x="0" y="14" font-size="13" font-weight="bold">${escapeXml(chart.title)}</text>${bars.join("")}</svg>`
  );
}
